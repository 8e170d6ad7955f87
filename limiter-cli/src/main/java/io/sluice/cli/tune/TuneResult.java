package io.sluice.cli.tune;

import java.util.List;

/** Everything one run of {@code tune} reports. */
record TuneResult(
    TuneConfig config,
    String command,
    String started,
    String store,
    long traceRequests,
    List<Row> rows,
    Recommender.Recommendation recommendation,
    List<String> notes,
    boolean interrupted,
    int settingsPlanned) {
}
