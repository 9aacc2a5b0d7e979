package dev.pgworkflows.bench;

import java.util.Arrays;
import java.util.List;

/** Percentiles and medians. */
final class Stats {
  private Stats() {}

  static double percentile(List<Double> values, double p) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int i = (int) Math.ceil(p / 100.0 * v.length) - 1;
    return v[Math.max(0, Math.min(i, v.length - 1))];
  }

  static double median(double... values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  static double spread(double... values) {
    double min = Arrays.stream(values).min().orElse(Double.NaN);
    double max = Arrays.stream(values).max().orElse(Double.NaN);
    return max - min;
  }
}
