package io.sluice.sync;

import io.sluice.sync.WindowProbe.Violation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * What the randomized probes ({@link WindowProbe}, {@link BucketProbe}) share: shrinking a case, noting
 * what it found.
 */
final class ProbeShrink {
  private ProbeShrink() {
  }

  /**
   * The fewest events, removed in chunks and then one by one, that still {@code show} what the whole
   * list shows (a run that throws shows nothing).
   */
  static <E> List<E> shrink(List<E> events, Predicate<List<E>> shows) {
    List<E> kept = new ArrayList<>(events);
    int chunk = Math.max(1, kept.size() / 2);
    while (true) {
      boolean removed = false;
      for (int from = 0; from < kept.size(); ) {
        List<E> candidate = new ArrayList<>(kept);
        candidate.subList(from, Math.min(kept.size(), from + chunk)).clear();
        boolean still;
        try {
          still = shows.test(List.copyOf(candidate));
        } catch (RuntimeException e) {
          still = false;
        }
        if (still) {
          kept = candidate;
          removed = true;
        } else {
          from += chunk;
        }
      }
      if (!removed) {
        if (chunk == 1) {
          return List.copyOf(kept);
        }
        chunk = Math.max(1, chunk / 2);
      }
    }
  }

  /** Counts a violation of {@code type}; the first three of each type are kept in detail. */
  static void note(List<Violation> violations, Map<String, Integer> counts, String type, String key, long window,
      String detail) {
    counts.merge(type, 1, Integer::sum);
    if (violations.stream().filter(v -> v.type().equals(type)).count() < 3) {
      violations.add(new Violation(type, key, window, detail));
    }
  }
}
