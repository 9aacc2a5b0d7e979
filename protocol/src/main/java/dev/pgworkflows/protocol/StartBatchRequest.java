package dev.pgworkflows.protocol;

import java.util.List;

/** {@code POST /v1/workflows/{name}/runs/batch}: many starts in one request and transaction. */
public record StartBatchRequest(List<StartBatchItem> runs) {}
