package dev.pgworkflows.bench;

import java.util.List;

/** A workflow system under test; both implement the same workloads the same way. */
interface Contender extends AutoCloseable {
  String name();

  /** Starts n three-step no-op runs from 8 threads and waits for all; returns seconds. */
  double burnDown(int n) throws Exception;

  /**
   * The protocol's burn-down: n three-step runs started while nothing serves them, then served;
   * seconds from the serving's start until all are done.
   */
  double drain(int n) throws Exception;

  /** Starts runs at {@code rate}/s for {@code seconds}, open loop, and waits for them. */
  Recorder steady(double rate, double seconds) throws Exception;

  /** n concurrent runs sleeping 1 s; the overshoot of each wake-up in ms. */
  List<Double> sleepOvershoot(int n) throws Exception;

  /** Start to first step of one run after {@code idleMs} of idleness, {@code samples} times. */
  List<Double> idleStart(int samples, long idleMs) throws Exception;

  @Override
  void close();
}
