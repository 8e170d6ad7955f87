package io.sluice.node;

/**
 * Test-only bridge to limiter-node's package-private {@link ReferenceModels} (shipped in its
 * test-jar), so that tests in other packages can check the store's scripts against the very models
 * the in-process kernels are checked against.
 */
public final class ReferenceModelAccess {
  private ReferenceModelAccess() {
  }

  /** What a reference model says of one request; times in nanoseconds. */
  public static final class Expected {
    public final boolean allowed;
    public final long remaining;
    /** Nanoseconds until the request could pass; -1 when the model does not define it. */
    public final long retryAfterNanos;
    public final long delayNanos;

    Expected(ReferenceModels.Answer a) {
      this.allowed = a.allowed;
      this.remaining = a.remaining;
      this.retryAfterNanos = a.retryAfter;
      this.delayNanos = a.delay;
    }

    @Override
    public String toString() {
      return (allowed ? "allowed" : "denied") + " remaining=" + remaining + " retryAfter=" + retryAfterNanos
          + "ns delay=" + delayNanos + "ns";
    }
  }

  /** One key's reference model. */
  public interface Model {
    Expected request(long nowNanos, long cost);
  }

  /** The reference model of {@code limit} for a key first seen at {@code startNanos}. */
  public static Model of(Limit limit, long startNanos) {
    ReferenceModels.Model m = ReferenceModels.of(limit, startNanos);
    return (now, cost) -> new Expected(m.request(now, cost));
  }
}
