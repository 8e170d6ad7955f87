package io.sluice.sidecar;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.node.Decision;
import io.sluice.node.RateLimitHeaders;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rules;
import io.sluice.sidecar.CheckRequest.BadRequest;
import io.sluice.sync.SyncedLimiter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sidecar's endpoints on Jetty's core handler API (no servlet layer): {@code POST /check},
 * {@code GET /health}, {@code GET /metrics} ({@code HEAD} too). Every answer but the metrics is JSON;
 * every refusal names what is wrong. A check's body is read without holding a thread (a client that
 * sends it slowly costs a connection, not a worker) and within the body timeout, then 408;
 * the decision itself may block (an exact-mode decision waits for Redis).
 *
 * <p>Concurrency: Jetty's threads handle requests at once. Everything the handler holds is final and
 * immutable or thread-safe (the limiters, the rules, the registries); the timers of the other statuses
 * are made once each in a concurrent map, and the two most used ones are cached in volatile fields (a
 * race registers the same timer twice with Micrometer, which returns the one it has).
 */
final class CheckHandler extends Handler.Abstract {
  private static final Logger LOG = LoggerFactory.getLogger(CheckHandler.class);
  private static final String JSON = "application/json";
  private static final HttpField JSON_CONTENT_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, JSON);
  private static final JsonFactory JSON_FACTORY = new JsonFactory();
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private final Map<String, SyncedLimiter> limiters;
  /** Each limit's limiter and response fields, by name. */
  private final Map<String, Target> targets;
  /** The limit used when a check names none: the only one, or null when there are several. */
  private final Target soleTarget;
  /** Reads the common check from the body's bytes; the strict parser reads the rest. */
  private final FlatCheckReader flatReader;
  private final String knownLimits;
  private final int maxBodyBytes;
  private final int maxKeyLength;
  /** How long a check's body may take to arrive, from the request's headers on. */
  private final long bodyTimeoutMillis;
  /** What {@code GET /metrics} scrapes. */
  private final PrometheusMeterRegistry registry;
  /** Where the request timers are registered: the Prometheus registry, or a composite of it and OTLP's. */
  private final MeterRegistry meters;
  private final String storeName;
  /** One timer per endpoint and status: both sets are small and fixed, so the map stays small. */
  private final Map<Integer, Timer> timers = new ConcurrentHashMap<>();
  /** The timers of allowed and denied checks, the two of nearly every request, without the map's boxed key. */
  private volatile Timer allowedChecks;
  private volatile Timer deniedChecks;
  /** Method tags: the sidecar's own methods, anything else as OTHER (bounded, as every tag here). */
  private static final String[] METHODS = {"POST", "GET", "HEAD", "OTHER"};

  private final Set<String> identities;
  private final RequestLimiter requestLimiter;

  CheckHandler(Map<String, SyncedLimiter> limiters, Rules rules, Set<String> identities, int maxBodyBytes,
      int maxKeyLength, long bodyTimeoutMillis, PrometheusMeterRegistry registry, MeterRegistry meters,
      String storeName) {
    this.identities = Set.copyOf(identities);
    // (the limiters are the server's, closed by it: the request limiter only routes to them)
    this.requestLimiter = rules == null ? null
        : RequestLimiter.builder(rules).limiters(limit -> limiters.get(limit.name())).build();
    this.bodyTimeoutMillis = bodyTimeoutMillis;
    this.limiters = Map.copyOf(limiters);
    Map<String, Target> byName = new java.util.HashMap<>();
    limiters.forEach((name, limiter) -> byName.put(name, new Target(limiter)));
    this.targets = Map.copyOf(byName);
    this.soleTarget = limiters.size() == 1 ? targets.values().iterator().next() : null;
    this.flatReader = new FlatCheckReader(limiters.keySet(), maxKeyLength);
    this.knownLimits = String.join(", ", new TreeSet<>(limiters.keySet()));
    this.maxBodyBytes = maxBodyBytes;
    this.maxKeyLength = maxKeyLength;
    this.registry = registry;
    this.meters = meters;
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
          if ("POST".equals(method)) {
            check(request, response, callback, start); // answers when the body has come, and times itself
            return true;
          }
          status = methodNotAllowed(response, callback, "POST", method, path);
          break;
        case "/health":
          endpoint = 1;
          status = readOnly(method) ? health(response, callback)
              : methodNotAllowed(response, callback, "GET, HEAD", method, path);
          break;
        case "/metrics":
          endpoint = 2;
          status = readOnly(method) ? metrics(response, callback)
              : methodNotAllowed(response, callback, "GET, HEAD", method, path);
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
    timer(endpoint, status, methodIndex(method)).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    return true;
  }

  /** GET, and HEAD (the same answer without its body: Jetty leaves the body out). */
  private static boolean readOnly(String method) {
    return "GET".equals(method) || "HEAD".equals(method);
  }

  /**
   * Reads the body without a thread waiting on it, at most the body timeout, then decides
   * on the thread that delivered its last bytes (the handler's own when the body came with the headers).
   */
  private void check(Request request, Response response, Callback callback, long start) {
    long declared = request.getLength();
    if (declared > maxBodyBytes) {
      finish(start, error(response, callback, 413, null, "body: " + declared + " bytes, at most " + maxBodyBytes));
      return;
    }
    BodyReader body = new BodyReader(request, maxBodyBytes, declared);
    if (body.readAvailable()) {
      finish(start, decideSafely(body, response, callback)); // no timer to set: nothing to wait for
      return;
    }
    java.util.concurrent.CompletableFuture<BodyReader> rest = body.readRest();
    org.eclipse.jetty.util.thread.Scheduler.Task deadline = request.getComponents().getScheduler().schedule(
        () -> rest.completeExceptionally(new java.util.concurrent.TimeoutException()), bodyTimeoutMillis,
        TimeUnit.MILLISECONDS);
    rest.whenComplete((read, failure) -> {
      deadline.cancel();
      int status;
      if (failure == null) {
        status = decideSafely(read, response, callback);
      } else if (unwrap(failure) instanceof java.util.concurrent.TimeoutException) {
        response.getHeaders().put(HttpHeader.CONNECTION, "close");
        status = error(response, callback, 408, null, "body: not received within " + bodyTimeoutMillis + " ms");
      } else {
        status = error(response, callback, 400, null, "body: unreadable: " + unwrap(failure).getMessage());
      }
      finish(start, status);
    });
  }

  /** The answer to a body read to its end (or to its failure); a failure of the handler's own is a 500. */
  private int decideSafely(BodyReader body, Response response, Callback callback) {
    try {
      Throwable failure = body.failure();
      if (failure == null) {
        return decide(body.bytes(), body.size(), response, callback);
      } else if (failure instanceof BodyReader.TooLarge) {
        return error(response, callback, 413, null, "body: more than " + maxBodyBytes + " bytes");
      } else {
        return error(response, callback, 400, null, "body: unreadable: " + failure.getMessage());
      }
    } catch (RuntimeException e) {
      LOG.warn("sluice serve: POST /check failed", e);
      if (response.isCommitted()) {
        callback.failed(e);
        return 500;
      }
      return error(response, callback, 500, null, "internal error");
    }
  }

  private void finish(long start, int status) {
    checkTimer(status).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
  }

  private static int methodIndex(String method) {
    for (int i = 0; i < METHODS.length - 1; i++) {
      if (METHODS[i].equals(method)) {
        return i;
      }
    }
    return METHODS.length - 1;
  }

  private static Throwable unwrap(Throwable t) {
    while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private int decide(byte[] body, int length, Response response, Callback callback) {
    CheckRequest check = flatReader.read(body, length);
    if (check == null) {
      try {
        check = CheckRequest.parse(body, length, maxKeyLength);
      } catch (BadRequest e) {
        return error(response, callback, e.status, e.field, e.getMessage());
      }
    }
    if (check.forRules) {
      return decideByRules(check, response, callback);
    }
    Target target;
    if (check.limit == null) {
      target = soleTarget;
      if (target == null) {
        return error(response, callback, 400, "limit", "limit: required, one of " + knownLimits);
      }
    } else {
      target = targets.get(check.limit);
      if (target == null) {
        return error(response, callback, 400, "limit", "limit: unknown limit \"" + check.limit + "\", known: "
            + knownLimits);
      }
    }
    SyncedLimiter limiter = target.limiter;
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
    target.fields.addTo(d, headers);
    return answer(d, false, response, callback);
  }

  /**
   * A request for the rules: every limit that applies to it, each keyed by the identity its rule
   * names; a request that no limit applies to (no identity a rule needs) is allowed and says so.
   */
  private int decideByRules(CheckRequest check, Response response, Callback callback) {
    if (requestLimiter == null) {
      return error(response, callback, 400, "identities", "identities: this sidecar has no rules (give them in"
          + " --limits-file); check one limit with {\"key\", \"limit\"}");
    }
    for (String dimension : check.identities.keySet()) {
      if (!identities.contains(dimension)) {
        // (a misspelt identity would otherwise pass every limit keyed by the right one)
        return error(response, callback, 400, "identities." + dimension, "identities." + dimension
            + ": no rule is keyed by it (the rules key by " + String.join(", ", new TreeSet<>(identities)) + ")");
      }
    }
    Decision d;
    try {
      d = requestLimiter.checkIfAnyApplies(check.context(), check.cost);
    } catch (IllegalStateException closed) {
      return error(response, callback, 503, null, "unavailable: " + closed.getMessage());
    } catch (IllegalArgumentException e) {
      // an unknown plan and no default plan, or a cost above one of the limits' capacity (the only
      // requests the rules and limiters refuse now): the message starts with its field, as every
      // message of the rules and limiters does
      String message = e.getMessage() == null ? "invalid request" : e.getMessage();
      int colon = message.indexOf(':');
      return error(response, callback, 400, colon > 0 ? message.substring(0, colon) : null, message);
    }
    if (d == null) {
      send(response, callback, 200, JSON, UNLIMITED); // no limit applies to this request
      return 200;
    }
    HttpFields.Mutable headers = response.getHeaders();
    for (Map.Entry<String, String> f : RateLimitHeaders.of(d).entrySet()) {
      headers.add(f.getKey(), f.getValue());
    }
    return answer(d, true, response, callback);
  }

  /** 200 or 429 and the decision as JSON (with each limit's part for rules), after its rate limit fields. */
  private int answer(Decision d, boolean withParts, Response response, Callback callback) {
    byte[] body = DecisionJson.of(d, withParts);
    int status = d.allowed() ? 200 : 429;
    response.setStatus(status);
    HttpFields.Mutable headers = response.getHeaders();
    headers.add(JSON_CONTENT_TYPE);
    headers.add(new HttpField.LongValueHttpField(HttpHeader.CONTENT_LENGTH, body.length));
    response.write(true, ByteBuffer.wrap(body), callback);
    return status;
  }

  /** A request no limit applies to: allowed, and no limit named. */
  private static final byte[] UNLIMITED = json(80, g -> {
    g.writeStartObject();
    g.writeBooleanField("allowed", true);
    g.writeStringField("outcome", "allowed");
    g.writeNullField("limit");
    g.writeArrayFieldStart("limits");
    g.writeEndArray();
    g.writeEndObject();
  });

  private int health(Response response, Callback callback) {
    boolean degraded = false;
    for (SyncedLimiter l : limiters.values()) {
      degraded |= l.storeBreaker().keepsStoreOut();
    }
    boolean anyDown = degraded;
    byte[] body = json(64 + 96 * limiters.size(), g -> {
      g.writeStartObject();
      // DEGRADED still answers 200: while the store is down the fallback policy keeps deciding
      g.writeStringField("status", anyDown ? "DEGRADED" : "UP");
      g.writeStringField("store", storeName);
      g.writeArrayFieldStart("limits");
      for (SyncedLimiter l : new TreeMap<>(limiters).values()) {
        g.writeStartObject();
        g.writeStringField("name", l.limit().name());
        g.writeStringField("breaker", l.storeBreaker().state().name());
        g.writeNumberField("nodes", l.activeNodes());
        g.writeNumberField("keys", l.keys());
        g.writeNumberField("storeOutOfMemory", l.storeOutOfMemoryErrors());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    });
    send(response, callback, 200, JSON, body);
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
    send(response, callback, status, JSON, errorJson(status, field, message));
    return status;
  }

  /** The JSON of every refusal: {@code {"error": ..., "field": ..., "status": ...}} (no field: none). */
  static byte[] errorJson(int status, String field, String message) {
    return json(message.length() + 48, g -> {
      g.writeStartObject();
      g.writeStringField("error", message);
      if (field != null) {
        g.writeStringField("field", field);
      }
      g.writeNumberField("status", status);
      g.writeEndObject();
    });
  }

  /** What a {@link JsonWriter} writes, as UTF-8 bytes: Jackson's streaming generator, no tree. */
  static byte[] json(int sizeHint, JsonWriter writer) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(sizeHint);
    try (JsonGenerator g = JSON_FACTORY.createGenerator(out)) {
      writer.write(g);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // (a byte array does not fail)
    }
    return out.toByteArray();
  }

  @FunctionalInterface
  interface JsonWriter {
    void write(JsonGenerator g) throws IOException;
  }

  private static void send(Response response, Callback callback, int status, String contentType, String body) {
    send(response, callback, status, contentType, body.getBytes(StandardCharsets.UTF_8));
  }

  private static void send(Response response, Callback callback, int status, String contentType, byte[] bytes) {
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
    response.write(true, ByteBuffer.wrap(bytes), callback);
  }

  /**
   * Micrometer's standard HTTP server timer ({@code http.server.requests}: method, uri, status, outcome,
   * exception; Prometheus {@code http_server_requests_seconds}), with a percentile histogram so that
   * dashboards can take a p99 across instances.
   */
  private Timer checkTimer(int status) {
    if (status == 200 || status == 429) {
      Timer t = status == 200 ? allowedChecks : deniedChecks;
      if (t == null) { // (two threads may both look it up: the registry gives both the same timer)
        t = timer(0, status, 0);
        if (status == 200) {
          allowedChecks = t;
        } else {
          deniedChecks = t;
        }
      }
      return t;
    }
    return timer(0, status, 0);
  }

  private Timer timer(int endpoint, int status, int method) {
    return timers.computeIfAbsent((endpoint * 1000 + status) * 8 + method, k -> Timer.builder("http.server.requests")
        .description("Requests served by the sidecar")
        .tag("method", METHODS[method])
        .tag("uri", endpoint == 0 ? "/check" : endpoint == 1 ? "/health" : endpoint == 2 ? "/metrics"
            : status == 404 ? "NOT_FOUND" : "UNKNOWN")
        .tag("status", Integer.toString(status))
        .tag("outcome", status >= 500 ? "SERVER_ERROR" : status >= 400 ? "CLIENT_ERROR" : status >= 300 ? "REDIRECTION"
            : status >= 200 ? "SUCCESS" : "INFORMATIONAL")
        .tag("exception", "none")
        .publishPercentileHistogram()
        .register(meters));
  }

  /** A limit's limiter and its rate limit fields. */
  private static final class Target {
    final SyncedLimiter limiter;
    final LimitFields fields;

    Target(SyncedLimiter limiter) {
      this.limiter = limiter;
      this.fields = new LimitFields(limiter.limit());
    }
  }
}
