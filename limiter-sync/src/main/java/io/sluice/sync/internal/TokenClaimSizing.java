package io.sluice.sync.internal;

import java.util.function.IntSupplier;

/**
 * How many tokens a key's token claim asks for beyond what its decision needs ({@link TokenClaims}):
 * the key's demand, noted per decision as a rate decaying over two sync intervals, over the claim
 * horizon, within what the nodes may hold ahead of one another's requests. Stateless beyond its
 * settings: the demand lives in each key's {@link TokenHolding}, under its monitor.
 */
final class TokenClaimSizing {
  /** The fewest tokens of the refill to come a node claims at a bucket's limit with other nodes. */
  static final long MIN_REFILL_PART = 8;
  /** The smallest bucket, in tokens per node, on which a node with other nodes claims tokens ahead of its requests. */
  static final long MIN_BUCKET_PER_NODE = 8;

  private final TokenHolding.Bucket bucket;
  private final long capacity;
  /** Tokens the bucket refills per period, and the period (ns). */
  private final long refill;
  private final long periodNanos;
  private final long syncIntervalMicros;
  private final long horizonMicros;
  /** How long the bucket takes to refill from empty to full, microseconds. */
  private final double wholeRefillMicros;
  /** How long a large cost keeps a key from claiming ahead (see {@link #ahead}): four whole refills or sync pairs, us. */
  private final long largeCostMemoryMicros;
  private final long batchSize;
  private final IntSupplier nodes;
  /** A region's part of a token-bucket global quota (see TokenClaims#scale). */
  private final boolean regional;
  /**
   * Reservation mode: on a key other nodes claim on, none of the refill ahead at the limit, and below it
   * no more than the key uses before the bucket refills past the tokens (see {@link #ahead}).
   */
  private final boolean reservation;

  TokenClaimSizing(TokenHolding.Bucket bucket, long refill, long periodNanos, long syncIntervalMicros,
      long horizonMicros, long batchSize, IntSupplier nodes, boolean regional, boolean reservation) {
    this.bucket = bucket;
    this.capacity = bucket.capacity();
    this.refill = refill;
    this.periodNanos = periodNanos;
    this.syncIntervalMicros = syncIntervalMicros;
    this.horizonMicros = horizonMicros;
    this.wholeRefillMicros = (double) bucket.capacity() * bucket.interval() / bucket.scale();
    this.largeCostMemoryMicros = (long) Math.min(Long.MAX_VALUE / 4, 4 * Math.max(wholeRefillMicros, 2.0 * syncIntervalMicros));
    this.batchSize = batchSize;
    this.nodes = nodes;
    this.regional = regional;
    this.reservation = reservation;
  }

  /** Under the holding's monitor: a decision of {@code cost} at {@code now} in the key's demand; what it added to the rate's sum. */
  double noteDemand(TokenHolding h, long now, long cost) {
    double tau = 2.0 * syncIntervalMicros;
    if (h.rateAt != Long.MIN_VALUE && now > h.rateAt) {
      h.rate *= Math.exp(-(now - h.rateAt) / tau);
    }
    // (each cost counted at most four times the mean so far: a few requests of the whole capacity
    // among requests of one token made the mean a quarter of a bucket of 10^6, and each node's claim
    // ahead, two requests at that mean, a tenth of a second's refill held the other's requests off for
    // that long, BucketProbe seed 261: 531 of 1,621 requests denied that the exact bucket admitted; a
    // key whose costs do rise is followed within a few requests. In the rate the claims ahead are sized
    // by, a cost counts for no more than a claim ahead holds: see largestAhead)
    h.noteLargestCost(cost, now, largeCostMemoryMicros);
    double counted = h.meanCost == 0 ? cost : Math.min(cost, 4 * h.meanCost);
    double inRate = Math.min(counted, largestAhead());
    h.rate += inRate / tau;
    h.rateAt = Math.max(now, h.rateAt);
    h.meanCost = h.meanCost == 0 ? cost : h.meanCost * 0.75 + counted * 0.25;
    return inRate;
  }

  /**
   * The most of one request's cost that counts in the rate claims ahead are sized by: an even part per
   * node of a quarter of the bucket, what claims ahead hold at most far from the limit. A request that
   * costs more is paid from the bucket, not from a claim ahead (at the limit, see TokenClaims#askStore), so it asks
   * the store whatever is held ahead: counted whole, a few requests of the whole bucket of 100 among
   * requests of one token made the rate 500-1,200 tokens a second on nodes of five, and each claimed
   * 25-44 tokens of the refill to come ahead of its next requests of one, holding the other nodes'
   * requests off (BucketProbe seed 7175).
   */
  private double largestAhead() {
    return Math.max(1.0, capacity / (4.0 * Math.max(1, nodes.getAsInt())));
  }

  /**
   * Under the holding's monitor: whether a store answer lately showed another node's claims on the key's
   * bucket ({@code TokenClaims#decideOnGrant}), whatever the registry's count of nodes says (a node may
   * count itself alone before the registry has answered it twice). Lately: within as long as a large cost
   * counts ({@link #largeCostMemoryMicros}, four whole refills or sync pairs) of the last decision's time.
   * Each later answer that shows them renews it, but at the limit an ask the store grants nothing writes
   * nothing, so a node whose asks find the bucket empty (or that waits between its requests) leaves no
   * trace in the others' answers: with four claim horizons (800 ms on a bucket of 500 a second), a node
   * that kept the bucket at its limit forgot within a second a node it had seen claim once, claimed the
   * refill ahead again, and that node's next request at a token's due time was denied
   * (TokenClaimsTest#inReservationModeTheRefillAtTheLimitGoesToWhicheverNodeAsksFirst). The price: a node
   * that is alone again pays a store call per token at the limit for that long (a bucket of 1,000 an
   * hour: four hours of a call per token, about one every 3.6 s).
   */
  private boolean othersClaimLately(TokenHolding h) {
    return h.othersSeenAt != Long.MIN_VALUE && h.othersSeenAt > h.seen - largeCostMemoryMicros;
  }

  /**
   * Under the holding's monitor: takes back what {@link #noteDemand} added to the key's rate ({@code
   * inRate}, what it returned), for a decision that will be made again (and noted again).
   */
  void forgetDemand(TokenHolding h, double inRate, double meanCostBefore) {
    h.rate -= inRate / (2.0 * syncIntervalMicros);
    h.meanCost = meanCostBefore;
  }

  /**
   * Tokens to ask for beyond the need: what the key is expected to ask over the claim horizon, at most
   * the batch size (or two requests at their mean cost, where more) and an even part per node of a
   * quarter of what the bucket held at the last answer
   * (held tokens are not given back, so a node's idle holding must leave the others room; at its
   * limit: of the refill over the horizon), as window claims take at most half of what is free; none
   * for a key asked less than about once a horizon (its next request asks the store, as a cold window
   * key's does), nor, with other nodes, on a bucket of fewer than {@link #MIN_BUCKET_PER_NODE} tokens per node.
   * In reservation mode, on a key other nodes claim on ({@link #othersClaimLately}): none of the refill
   * at the limit, and below it no more than the key's demand uses before the bucket refills past the
   * tokens ({@code TokenHolding#usedBeforeExpiry}).
   */
  long ahead(TokenHolding h, boolean atLimit, long level) {
    // (what the key asks over the horizon, or over the time the bucket takes to refill whole where that
    // is shorter: held tokens expire once the bucket has refilled past them, and a node claiming for two
    // sync intervals of its requests on a bucket of 100 refilled 10,000 a second saw almost all of them
    // expire unused, charged in the store, while the other nodes' requests queued behind them
    // (BucketProbe seed 1266: 510 of 3,025 requests denied that the exact meter admitted))
    long expected = (long) Math.floor(h.rate * Math.min(horizonMicros, wholeRefillMicros));
    // (nor before the holding has used a token, on a key's first decision on this node: its rate is then that
    // one request over the horizon, which says nothing; a token claimed ahead on a key asked once stays
    // charged in the store, and where other nodes write the bucket it is not given back: while the key is
    // busy the backlog never drains back to the floor, and the store's bucket lags the exact one by it.
    // Accuracy kit, spread rates on 3 / 8 nodes: requests denied and not made up 0.52% / 0.46% -> 0.35% /
    // 0.19%, for 3% / 1% more store calls)
    if (expected < 1 || h.lastUse == Long.MIN_VALUE) {
      return 0;
    }
    long n = Math.max(1, nodes.getAsInt());
    if (n > 1 && capacity < MIN_BUCKET_PER_NODE * n) {
      // a node's part of a small bucket is a token or two: held and not used when the key's requests went
      // to other nodes, it stayed charged (a give-back is refused once another node wrote the bucket), and
      // the store's bucket lagged the exact one (accuracy kit, spread rates on 3 / 8 nodes, requests denied
      // and not made up 0.354% / 0.186% -> 0.133% / 0.129%, for 10% / 0.3% more store calls; such keys ask
      // the store for most decisions anyway)
      return 0;
    }
    if (n > 1 && h.largestCost > capacity - (n - 1) * (capacity / (4 * n))) {
      // a request of more than the other nodes' claims ahead leave of the bucket is paid only where none
      // holds any: tokens this node claimed ahead, charged in the store, denied such requests on the
      // others with the bucket full as the exact algorithm saw it (BucketProbe seed 9183, a meter of
      // 100 on two nodes, requests of 1 to 100: 3,324 permits admitted where the exact meter admitted
      // 4,939; seeds 9000-9299: 1.33% -> 0.58% of requests denied that the exact bucket admitted, and
      // 0.42% -> 0.02%, 0.31% -> 0.16%, 0.76% -> 0.29%, 0.62% -> 0.35% on the other sets). A key that
      // sees such requests asks the store for its small ones too, until none has come for a while
      return 0;
    }
    long fair = atLimit
        ? (long) (refill * (horizonMicros * 1_000.0 / periodNanos)) / n
        : (level < 0 ? capacity : level) / (4 * n);
    if (atLimit && (n > 1 && fair < MIN_REFILL_PART || reservation && othersClaimLately(h))) {
      // a few tokens of the refill held by one node are denied to the others' requests at their due
      // times, where the exact bucket admits whichever request comes first; a claim of fewer than
      // MIN_REFILL_PART saves too few calls to be worth it (accuracy kit, spread rates on 3 nodes:
      // requests denied and not made up 1.3% with claims of one token, 0.5% without; Zipf over 1,000
      // keys on 3 nodes 0.13% with claims of 4 to 7 tokens, 0.02% without, for 19% more store calls).
      // Reservation mode buys that order with store calls at any part of the refill, once other nodes
      // claim on the key: each node takes of the refill what it needs now, as the exact bucket hands it
      // out (accuracy kit, shapes on 3 / 8 nodes: false denials 11.5% / 12.3% -> 3.6% / 3.0% of
      // requests, store calls 54 / 119 -> 468 / 576 per 1,000 decisions; Zipf on 3 nodes 3.1% -> 0.15%
      // for 619 -> 750). A node alone on a key still claims ahead: nobody's request waits behind it.
      return 0;
    }
    // (at least two requests at their mean cost, as a window's claims: a batch of fewer tokens than a
    // request costs pays for none, and every request of a key at costs near 1,000 asked the store)
    long batch = Math.max(batchSize, (long) Math.ceil(2 * h.meanCost));
    long ahead = Math.max(0, Math.min(expected, Math.min(batch, fair)));
    // (a regional bucket, and in reservation mode a key other nodes claim on: no more than the key's
    // demand uses before the bucket refills past the tokens. Claimed beyond, they expired unused and
    // what they charged stayed in the store's backlog, given back only where no other node wrote since:
    // once the key reached its limit, each refilled token came due that much later in the store than in
    // the exact bucket, and a request in between was denied. Accuracy kit, shapes on 3 / 8 nodes,
    // reservation: false denials 3.6% / 3.0% -> 0.02% / 0.02%, for 468 / 576 -> 560 / 659 store calls
    // per 1,000 decisions; sparse keys 589 -> 750 calls. The approximate mode keeps its claims: its
    // nodes' parts of the refill ahead cost it more order than this lag does)
    return regional || reservation && othersClaimLately(h) ? Math.min(ahead, h.usedBeforeExpiry(bucket, level)) : ahead;
  }
}
