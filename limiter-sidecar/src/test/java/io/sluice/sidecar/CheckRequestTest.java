package io.sluice.sidecar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CheckRequestTest {
  private static CheckRequest parse(String json) {
    return CheckRequest.parse(json.getBytes(StandardCharsets.UTF_8), 32);
  }

  @Test
  void readsTheFieldsWithDefaults() {
    CheckRequest r = parse("{\"key\":\"user-1\",\"cost\":3,\"limit\":\"api\"}");
    assertThat(r.key).isEqualTo("user-1");
    assertThat(r.cost).isEqualTo(3);
    assertThat(r.limit).isEqualTo("api");
    CheckRequest d = parse(" {\"key\":\"ключ \\u00e9\"} ");
    assertThat(d.key).isEqualTo("ключ é");
    assertThat(d.cost).isEqualTo(1);
    assertThat(d.limit).isNull();
  }

  @Test
  void refusesWhatIsNotACheckNamingTheField() {
    assertThatThrownBy(() -> parse("")).hasMessageStartingWith("body: empty");
    assertThatThrownBy(() -> parse("{\"key\":")).hasMessageStartingWith("body: malformed JSON");
    assertThatThrownBy(() -> parse("[1]")).hasMessageStartingWith("body: must be a JSON object");
    assertThatThrownBy(() -> parse("{}")).hasMessage("key: required");
    assertThatThrownBy(() -> parse("{\"key\":\"\"}")).hasMessage("key: must not be empty");
    assertThatThrownBy(() -> parse("{\"key\":7}")).hasMessage("key: must be a string, got an integer");
    assertThatThrownBy(() -> parse("{\"key\":\"" + "k".repeat(33) + "\"}")).hasMessage("key: longer than 32 characters");
    assertThatThrownBy(() -> parse("{\"key\":\"a\",\"cost\":0}")).hasMessage("cost: must be at least 1, got 0");
    assertThatThrownBy(() -> parse("{\"key\":\"a\",\"cost\":1.5}")).hasMessageStartingWith("cost: must be a positive integer");
    assertThatThrownBy(() -> parse("{\"key\":\"a\",\"cost\":99999999999999999999}")).hasMessage("cost: out of range");
    assertThatThrownBy(() -> parse("{\"key\":\"a\",\"limit\":{}}")).hasMessage("limit: must be a string, got an object");
    assertThatThrownBy(() -> parse("{\"kye\":\"a\"}")).hasMessageContaining("unknown field \"kye\"");
    assertThatThrownBy(() -> parse("{\"key\":\"a\",\"key\":\"b\"}")).hasMessageStartingWith("body: malformed JSON")
        .hasMessageContaining("Duplicate");
    assertThatThrownBy(() -> parse("{\"key\":\"a\"} {}")).hasMessageStartingWith("body: unexpected content");
  }

  /**
   * JSON escapes can spell a lone surrogate, which has no UTF-8 form: such keys are refused (two of
   * them were once stored as the same bytes, one counter for distinct keys); pairs are fine.
   */
  @Test
  void refusesKeysThatAreNotValidUnicode() {
    assertThatThrownBy(() -> parse("{\"key\":\"a\\ud800\"}"))
        .hasMessage("key: not valid Unicode (a lone surrogate \\ud800 at character 1)")
        .satisfies(e -> assertThat(((CheckRequest.BadRequest) e).field).isEqualTo("key"));
    assertThatThrownBy(() -> parse("{\"key\":\"\\udc00b\"}")).hasMessageContaining("lone surrogate \\udc00 at character 0");
    assertThatThrownBy(() -> parse("{\"key\":\"\\udc00\\ud800\"}")).hasMessageContaining("\\udc00 at character 0");
    assertThat(parse("{\"key\":\"\\ud83d\\ude00 ok\"}").key).isEqualTo("\ud83d\ude00 ok");
    assertThat(CheckRequest.loneSurrogate("x\ud83d")).isEqualTo(1);
  }

  @Test
  void readsARequestForTheRules() {
    CheckRequest r = parse("{\"identities\":{\"ip\":\"10.0.0.7\",\"api-key\":\"k1\"},\"plan\":\"pro\","
        + "\"method\":\"post\",\"path\":\"/login\",\"cost\":2}");
    assertThat(r.forRules).isTrue();
    assertThat(r.cost).isEqualTo(2);
    io.sluice.node.RequestContext c = r.context();
    assertThat(c.plan()).isEqualTo("pro");
    assertThat(c.method()).isEqualTo("POST");
    assertThat(c.path()).isEqualTo("/login");
    assertThat(c.identity("ip")).isEqualTo("10.0.0.7");
    assertThat(c.identity("api-key")).isEqualTo("k1");
    CheckRequest bare = parse("{\"identities\":{}}");
    assertThat(bare.context().method()).isEqualTo("GET");
    assertThat(bare.context().path()).isEqualTo("/");
    assertThat(bare.context().plan()).isNull();
    assertThat(parse("{\"key\":\"a\"}").forRules).isFalse();
  }

  @Test
  void refusesABadRequestForTheRulesNamingTheField() {
    assertThatThrownBy(() -> parse("{\"identities\":{\"ip\":\"a\"},\"key\":\"b\"}"))
        .hasMessageStartingWith("key: a check is for one limit (key, limit) or for the rules");
    assertThatThrownBy(() -> parse("{\"identities\":[\"a\"]}")).hasMessageStartingWith("identities: must be an object");
    assertThatThrownBy(() -> parse("{\"identities\":{\"ip\":7}}")).hasMessage("identities.ip: must be a string, got an integer");
    assertThatThrownBy(() -> parse("{\"identities\":{\"ip\":\"" + "k".repeat(33) + "\"}}"))
        .hasMessage("identities.ip: longer than 32 characters");
    assertThatThrownBy(() -> parse("{\"path\":\"login\"}")).hasMessageStartingWith("path: must start with '/'");
    assertThatThrownBy(() -> parse("{\"method\":\"GE T\"}")).hasMessageStartingWith("method: must be an HTTP method");
    assertThatThrownBy(() -> parse("{\"identities\":{\"ip\":\"a\",\"ip\":\"b\"}}")).hasMessageStartingWith("body: malformed JSON");
  }
}
