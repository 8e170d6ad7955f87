package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class DeploymentNodeIdTest {

  @Test
  void takesTheDeploymentsNameInOrder() {
    assertThat(DeploymentNodeId.of(Map.of("SLUICE_NODE_ID", "web-1", "POD_NAME", "api-7f9c", "HOSTNAME", "h")))
        .isEqualTo("web-1");
    assertThat(DeploymentNodeId.of(Map.of("POD_NAME", "api-7f9c-x2x", "HOSTNAME", "h"))).isEqualTo("api-7f9c-x2x");
    assertThat(DeploymentNodeId.of(Map.of("HOSTNAME", "3f2a91c0d5e1"))).isEqualTo("3f2a91c0d5e1");
  }

  @Test
  void makesANameValidAndSkipsAnEmptyOne() {
    assertThat(DeploymentNodeId.of(Map.of("SLUICE_NODE_ID", "  ", "HOSTNAME", "ip-10-0-0-1.ec2 internal")))
        .isEqualTo("ip-10-0-0-1.ec2-internal");
    assertThat(DeploymentNodeId.of(Map.of("HOSTNAME", "h".repeat(80)))).hasSize(64);
    // and whatever it gives passes the builder's own check
    SyncConfig.custom().nodeId(DeploymentNodeId.of(Map.of("HOSTNAME", "a/b@c d"))).build();
  }

  @Test
  void isRandomWithoutOne() {
    String a = DeploymentNodeId.of(Map.of());
    String b = DeploymentNodeId.of(Map.of("PATH", "/usr/bin"));
    assertThat(a).startsWith("node-").isNotEqualTo(b);
  }
}
