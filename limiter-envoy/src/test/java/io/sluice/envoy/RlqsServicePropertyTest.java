package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction;
import io.sluice.sync.sim.MemoryStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The service's whole assignment logic under random histories (the in-memory store, the clock and the
 * ticks driven by the test, deliveries instant): streams open, report random demand, close; ticks run
 * late or not at all now and then. At every step, the assignments live at that moment (each open
 * stream's latest, before its TTL ran out) sum to at most the bucket's limit, and a stream alone long
 * enough holds the whole limit.
 */
class RlqsServicePropertyTest {
  private static final long SEED = Long.getLong("sluice.rlqs.seed", System.nanoTime());
  private static final Map<String, String> API = Map.of("name", "api");

  /** One stream's latest assignment, as the server sent it: its rate and the moment it expires. */
  static final class Held {
    final RlqsServiceTest.Client client = new RlqsServiceTest.Client();
    long rate = -1;
    long expires = Long.MIN_VALUE;
    int seen;

    void update(long now) {
      List<BucketAction> actions = client.actions;
      for (; seen < actions.size(); seen++) {
        BucketAction a = actions.get(seen);
        if (a.hasQuotaAssignmentAction()) {
          rate = RlqsServiceTest.rate(a);
          expires = now + RlqsServiceTest.ttlMillis(a);
        }
      }
    }
  }

  @Test
  void liveAssignmentsNeverSumOverTheLimitWhateverHappens() {
    Random r = new Random(SEED);
    for (int round = 0; round < 150; round++) {
      long limit = r.nextInt(3) == 0 ? 1 + r.nextInt(5) : 1 + r.nextInt(500);
      String config = "assignment_period: 1s\nabandon_after: 60s\ndomains:\n  - domain: edge\n    buckets:\n"
          + "      - bucket_id: {name: api}\n        rate_limit: {unit: second, requests_per_unit: " + limit + "}\n";
      AtomicLong clock = new AtomicLong(2_000_000_000_000L + r.nextInt(1000));
      RlqsService s = new RlqsService(RlqsConfig.parse("p.yaml", config), new MemoryStore(), clock::get, 64, 16, null);
      List<Held> open = new ArrayList<>();
      String context = "seed " + SEED + " round " + round + " limit " + limit;
      for (int step = 0; step < 300; step++) {
        long before = clock.get();
        long after = before + 10 + r.nextInt(300);
        long p = Math.floorDiv(before, 1000);
        long renewAt = (p + 1) * 1000 - 200;
        boolean late = r.nextInt(10) == 0;
        if (before < renewAt && after >= renewAt && !late) {
          clock.set(renewAt + r.nextInt(50));
          s.renew(p + 1);
          check(open, clock.get(), limit, context);
        }
        if (after >= (p + 1) * 1000) {
          clock.set((p + 1) * 1000 + r.nextInt(late ? 300 : 50));
          s.raise(p + 1);
          check(open, clock.get(), limit, context);
        }
        clock.set(Math.max(clock.get(), after));
        int what = r.nextInt(10);
        if (what == 0 && open.size() < 6) {
          Held h = new Held();
          h.client.open(s);
          open.add(h);
        } else if (what == 1 && !open.isEmpty() && r.nextInt(4) == 0) {
          open.remove(r.nextInt(open.size())).client.in.onCompleted();
        } else if (!open.isEmpty()) {
          Held h = open.get(r.nextInt(open.size()));
          long n = r.nextInt((int) Math.min(limit * 2, 1000) + 1);
          long allowed = h.rate < 0 ? n : Math.min(n, h.rate);
          h.client.report("edge", API, allowed, n - allowed, 100 + r.nextInt(900));
        }
        check(open, clock.get(), limit, context);
      }
    }
  }

  private static void check(List<Held> open, long now, long limit, String context) {
    long sum = 0;
    StringBuilder live = new StringBuilder();
    for (Held h : open) {
      h.update(now);
      if (h.rate > 0 && h.expires > now) {
        sum += h.rate;
        live.append(' ').append(h.rate).append(" to ").append(h.expires);
      }
    }
    assertThat(sum).as("%s: live at %d:%s", context, now, live).isLessThanOrEqualTo(limit);
  }

  @Test
  void aStreamAloneLongEnoughHoldsTheWholeLimit() {
    Random r = new Random(SEED);
    for (int round = 0; round < 50; round++) {
      long limit = 1 + r.nextInt(1000);
      String config = "assignment_period: 1s\ndomains:\n  - domain: edge\n    buckets:\n"
          + "      - bucket_id: {name: api}\n        rate_limit: {unit: minute, requests_per_unit: " + limit + "}\n";
      AtomicLong clock = new AtomicLong(3_000_000_000_000L + r.nextInt(1000));
      RlqsService s = new RlqsService(RlqsConfig.parse("p.yaml", config), new MemoryStore(), clock::get, 64, 16, null);
      List<RlqsServiceTest.Client> others = new ArrayList<>();
      for (int i = r.nextInt(4); i > 0; i--) {
        RlqsServiceTest.Client c = new RlqsServiceTest.Client().open(s);
        c.report("edge", API, r.nextInt(100), r.nextInt(100), 1000);
        others.add(c);
      }
      RlqsServiceTest.Client alone = new RlqsServiceTest.Client().open(s);
      alone.report("edge", API, r.nextInt(100), 0, 1000);
      others.forEach(c -> c.in.onCompleted());
      for (int i = 0; i < 3; i++) {
        long p = Math.floorDiv(clock.get(), 1000);
        clock.set((p + 1) * 1000 - 150);
        s.renew(p + 1);
        clock.set((p + 1) * 1000 + 10);
        s.raise(p + 1);
        alone.report("edge", API, r.nextInt(100), 0, 1000);
      }
      assertThat(RlqsServiceTest.rate(alone.last())).as("seed %d round %d", SEED, round).isEqualTo(limit);
    }
  }
}
