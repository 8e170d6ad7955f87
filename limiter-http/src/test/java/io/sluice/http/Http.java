package io.sluice.http;

import io.sluice.node.StructuredFieldsAccess.Member;
import io.sluice.node.StructuredFieldsAccess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/** Real HTTP requests for the tests (the JDK's client), and the rate limit fields read by meaning. */
public final class Http {
  private static final HttpClient CLIENT = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(10))
      .build();

  private Http() {
  }

  public static HttpResponse<String> send(HttpRequest.Builder request) {
    try {
      return CLIENT.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public static HttpResponse<String> get(URI uri, String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri).GET();
    if (headers.length > 0) {
      b.headers(headers);
    }
    return send(b);
  }

  public static HttpResponse<String> post(URI uri, String body, String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofString(body));
    if (headers.length > 0) {
      b.headers(headers);
    }
    return send(b);
  }

  /** The {@code RateLimit-Policy} field as RFC 8941 list members (fails on a malformed field). */
  public static List<Member> policies(HttpResponse<?> response) {
    return StructuredFieldsAccess.parseList(response.headers().firstValue("RateLimit-Policy").orElseThrow(
        () -> new AssertionError("no RateLimit-Policy field in " + response.headers().map())));
  }

  /** The single member of the {@code RateLimit} field. */
  public static Member rateLimit(HttpResponse<?> response) {
    List<Member> members = StructuredFieldsAccess.parseList(response.headers().firstValue("RateLimit").orElseThrow(
        () -> new AssertionError("no RateLimit field in " + response.headers().map())));
    if (members.size() != 1) {
      throw new AssertionError("RateLimit must hold one item, got " + members);
    }
    return members.get(0);
  }

  public static long longField(HttpResponse<?> response, String name) {
    return Long.parseLong(response.headers().firstValue(name).orElseThrow(
        () -> new AssertionError("no " + name + " field in " + response.headers().map())));
  }
}
