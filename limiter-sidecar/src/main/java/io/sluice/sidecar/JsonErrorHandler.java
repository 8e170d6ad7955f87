package io.sluice.sidecar;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The errors Jetty answers itself, before the sidecar's handler sees the request (a malformed or
 * ambiguous path, headers too large, a bad request line), in the sidecar's JSON like every other
 * refusal instead of Jetty's HTML page; no stack traces.
 */
final class JsonErrorHandler extends ErrorHandler {
  @Override
  protected void generateResponse(Request request, Response response, int code, String message, Throwable cause,
      Callback callback) {
    String reason = HttpStatus.getMessage(code);
    String text = "request: " + (message == null || message.isBlank() || message.equals(reason) ? reason
        : reason + " (" + message + ")");
    byte[] body = CheckHandler.errorJson(code, null, text);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    response.write(true, ByteBuffer.wrap(body), callback);
  }
}
