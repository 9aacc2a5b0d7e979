package dev.pgworkflows.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** Columns aligned for people: a header row in capitals, then one row per item. */
final class Table {
  private final List<String[]> rows = new ArrayList<>();
  private final int columns;

  Table(String... headers) {
    this.columns = headers.length;
    rows.add(headers);
  }

  Table row(Object... cells) {
    if (cells.length != columns) {
      throw new IllegalArgumentException(columns + " cells expected, got " + cells.length);
    }
    String[] text = new String[cells.length];
    for (int i = 0; i < cells.length; i++) {
      text[i] = cells[i] == null ? "-" : String.valueOf(cells[i]);
    }
    rows.add(text);
    return this;
  }

  boolean isEmpty() {
    return rows.size() == 1;
  }

  void print(PrintWriter out) {
    int[] widths = new int[columns];
    for (String[] row : rows) {
      for (int i = 0; i < columns; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        line.append(row[i]);
        if (i < columns - 1) {
          line.append(" ".repeat(widths[i] - row[i].length() + 2));
        }
      }
      out.println(line.toString().stripTrailing());
    }
    out.flush();
  }
}
