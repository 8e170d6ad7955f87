package io.sluice.http.serve;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.http.serve.CheckRequest.BadRequest;
import io.sluice.node.Decision;
import io.sluice.node.RateLimitHeaders;
import io.sluice.sync.SyncedLimiter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sidecar's endpoints on Jetty's core handler API (no servlet layer): {@code POST /check},
 * {@code GET /health}, {@code GET /metrics}. Every answer but the metrics is JSON; every refusal
 * names what is wrong. Blocking: bodies are small and read whole (capped), and an exact-mode
 * decision waits for Redis.
 */
final class CheckHandler extends Handler.Abstract {
  private static final Logger LOG = LoggerFactory.getLogger(CheckHandler.class);
  private static final String JSON = "application/json";
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private final Map<String, SyncedLimiter> limiters;
  /** The limit used when a check names none: the only one, or null when there are several. */
  private final SyncedLimiter soleLimiter;
  private final String knownLimits;
  private final int maxBodyBytes;
  private final int maxKeyLength;
  private final PrometheusMeterRegistry registry;
  private final String storeName;
  /** One timer per endpoint and status: both sets are small and fixed, so the map stays small. */
  private final Map<Integer, Timer> timers = new ConcurrentHashMap<>();

  CheckHandler(Map<String, SyncedLimiter> limiters, int maxBodyBytes, int maxKeyLength,
      PrometheusMeterRegistry registry, String storeName) {
    this.limiters = Map.copyOf(limiters);
    this.soleLimiter = limiters.size() == 1 ? limiters.values().iterator().next() : null;
    this.knownLimits = String.join(", ", new TreeSet<>(limiters.keySet()));
    this.maxBodyBytes = maxBodyBytes;
    this.maxKeyLength = maxKeyLength;
    this.registry = registry;
    this.storeName = storeName;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    long start = System.nanoTime();
    String path = Request.getPathInContext(request);
    String method = request.getMethod();
    int endpoint;
    int status;
    try {
      switch (path) {
        case "/check":
          endpoint = 0;
          status = "POST".equals(method) ? check(request, response, callback)
              : methodNotAllowed(response, callback, "POST", method, path);
          break;
        case "/health":
          endpoint = 1;
          status = "GET".equals(method) ? health(response, callback)
              : methodNotAllowed(response, callback, "GET", method, path);
          break;
        case "/metrics":
          endpoint = 2;
          status = "GET".equals(method) ? metrics(response, callback)
              : methodNotAllowed(response, callback, "GET", method, path);
          break;
        default:
          endpoint = 3;
          status = error(response, callback, 404, null, "path: no endpoint " + path
              + " (POST /check, GET /health, GET /metrics)");
      }
    } catch (RuntimeException e) {
      LOG.warn("sluice serve: {} {} failed", method, path, e);
      endpoint = 3;
      if (response.isCommitted()) {
        callback.failed(e); // the answer is under way: end the exchange rather than leave it hanging
        status = 500;
      } else {
        status = error(response, callback, 500, null, "internal error"); // the cause is in the log, not for clients
      }
    }
    timer(endpoint, status).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    return true;
  }

  private int check(Request request, Response response, Callback callback) {
    byte[] body;
    try {
      body = readCapped(request);
    } catch (BadRequest e) {
      return error(response, callback, e.status, e.field, e.getMessage());
    } catch (IOException e) {
      return error(response, callback, 400, null, "body: unreadable: " + e.getMessage());
    }
    CheckRequest check;
    try {
      check = CheckRequest.parse(body, maxKeyLength);
    } catch (BadRequest e) {
      return error(response, callback, e.status, e.field, e.getMessage());
    }
    SyncedLimiter limiter;
    if (check.limit == null) {
      limiter = soleLimiter;
      if (limiter == null) {
        return error(response, callback, 400, "limit", "limit: required, one of " + knownLimits);
      }
    } else {
      limiter = limiters.get(check.limit);
      if (limiter == null) {
        return error(response, callback, 400, "limit", "limit: unknown limit \"" + check.limit + "\", known: "
            + knownLimits);
      }
    }
    if (check.cost > limiter.limit().capacity()) {
      return error(response, callback, 400, "cost", "cost: at most the limit's capacity "
          + limiter.limit().capacity() + ", got " + check.cost);
    }
    Decision d;
    try {
      d = limiter.acquire(check.key, check.cost);
    } catch (IllegalStateException closed) {
      return error(response, callback, 503, null, "unavailable: " + closed.getMessage());
    }
    HttpFields.Mutable headers = response.getHeaders();
    for (Map.Entry<String, String> f : RateLimitHeaders.of(d).entrySet()) {
      headers.put(f.getKey(), f.getValue());
    }
    StringBuilder sb = new StringBuilder(160);
    sb.append("{\"allowed\":").append(d.allowed())
        .append(",\"outcome\":\"").append(d.outcome().tag())
        .append("\",\"limit\":\"").append(d.limit().name()) // names are [A-Za-z0-9_.:-]: nothing to escape
        .append("\",\"remaining\":").append(d.remaining())
        .append(",\"resetSeconds\":").append(d.resetSeconds())
        .append(",\"retryAfterSeconds\":").append(d.allowed() ? 0 : Math.max(1, d.retryAfterSeconds()))
        .append('}');
    int status = d.allowed() ? 200 : 429;
    send(response, callback, status, JSON, sb.toString());
    return status;
  }

  /** The whole body, or a 413 when it is (or says it is) longer than the cap. */
  private byte[] readCapped(Request request) throws IOException {
    long declared = request.getLength();
    if (declared > maxBodyBytes) {
      throw new BadRequest(413, null, "body: " + declared + " bytes, at most " + maxBodyBytes);
    }
    InputStream in = Content.Source.asInputStream(request);
    byte[] body = in.readNBytes(maxBodyBytes + 1);
    if (body.length > maxBodyBytes) {
      throw new BadRequest(413, null, "body: more than " + maxBodyBytes + " bytes");
    }
    return body;
  }

  private int health(Response response, Callback callback) {
    StringBuilder sb = new StringBuilder(64 + 96 * limiters.size());
    boolean degraded = false;
    StringBuilder parts = new StringBuilder();
    for (SyncedLimiter l : new TreeMap<>(limiters).values()) {
      CircuitBreaker.State state = l.circuitBreaker().getState();
      degraded |= state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN;
      if (parts.length() > 0) {
        parts.append(',');
      }
      parts.append("{\"name\":\"").append(l.limit().name())
          .append("\",\"breaker\":\"").append(state)
          .append("\",\"nodes\":").append(l.activeNodes())
          .append(",\"keys\":").append(l.keys())
          .append('}');
    }
    // DEGRADED still answers 200: while the store is down the fallback policy keeps deciding
    sb.append("{\"status\":\"").append(degraded ? "DEGRADED" : "UP")
        .append("\",\"store\":\"").append(storeName)
        .append("\",\"limits\":[").append(parts).append("]}");
    send(response, callback, 200, JSON, sb.toString());
    return 200;
  }

  private int metrics(Response response, Callback callback) {
    send(response, callback, 200, PROMETHEUS_TEXT, registry.scrape());
    return 200;
  }

  private int methodNotAllowed(Response response, Callback callback, String allowed, String method, String path) {
    response.getHeaders().put(HttpHeader.ALLOW, allowed);
    return error(response, callback, 405, null, "method: " + path + " takes " + allowed + ", got " + method);
  }

  private int error(Response response, Callback callback, int status, String field, String message) {
    StringBuilder sb = new StringBuilder(message.length() + 48);
    sb.append("{\"error\":\"");
    JsonStringEncoder.getInstance().quoteAsString(message, sb);
    sb.append('"');
    if (field != null) {
      sb.append(",\"field\":\"");
      JsonStringEncoder.getInstance().quoteAsString(field, sb);
      sb.append('"');
    }
    sb.append(",\"status\":").append(status).append('}');
    send(response, callback, status, JSON, sb.toString());
    return status;
  }

  private static void send(Response response, Callback callback, int status, String contentType, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
    response.write(true, ByteBuffer.wrap(bytes), callback);
  }

  private Timer timer(int endpoint, int status) {
    return timers.computeIfAbsent(endpoint * 1000 + status, k -> Timer.builder("sluice.http.server.requests")
        .description("Requests served by the sidecar")
        .tag("endpoint", endpoint == 0 ? "check" : endpoint == 1 ? "health" : endpoint == 2 ? "metrics" : "other")
        .tag("status", Integer.toString(status))
        .register(registry));
  }
}
