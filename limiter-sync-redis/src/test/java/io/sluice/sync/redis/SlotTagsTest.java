package io.sluice.sync.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SlotTagsTest {

  @Test
  void everySlotHasATagThatHashesToIt() {
    for (int slot = 0; slot < SlotHash.SLOT_COUNT; slot++) {
      String key = "sluice:seq:node:" + slot + ":{" + SlotTags.tagOf(slot) + "}";
      assertThat(SlotHash.getSlot(key.getBytes(StandardCharsets.UTF_8))).isEqualTo(slot);
    }
    assertThatThrownBy(() -> SlotTags.tagOf(SlotHash.SLOT_COUNT)).hasMessageStartingWith("slot:");
  }
}
