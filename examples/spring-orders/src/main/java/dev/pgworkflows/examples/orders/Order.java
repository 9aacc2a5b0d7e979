package dev.pgworkflows.examples.orders;

/** An order as {@code POST /orders} takes it, and as its workflow's input. */
public record Order(String orderId, String item, int quantity) {}
