package io.sluice.region;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.StoreUnavailableException;
import java.time.Duration;
import java.util.List;

/**
 * The coordinator's link to one region's Redis. Connects on first use and again after a failed
 * connect, so that a region down at start does not stop the coordinator from serving the others.
 * Concurrency: the connection is made and closed under the client's monitor (a round and a close may
 * meet); the calls themselves go through Lettuce's thread-safe connection.
 */
interface RegionClient extends AutoCloseable {
  long epoch();

  List<String> keys(Limit limit, long window, int maxKeys);

  /**
   * The region's node registry (see {@link RegionShareStore#nodes}); empty for a region whose nodes
   * do not register.
   */
  default RegionShareStore.Registry nodes() {
    return RegionShareStore.Registry.EMPTY;
  }

  List<RegionShareStore.KeyState> read(Limit limit, long window, List<String> keys);

  RegionShareStore.WriteResult write(long epoch, Counter counter, long window, long nowMicros, Duration ttl,
      List<RegionShareStore.ShareWrite> writes);

  @Override
  void close();

  static RegionClient of(Region region) {
    return new RegionClient() {
      private RegionShareStore store;

      private synchronized RegionShareStore store() {
        if (store == null) {
          try {
            store = RegionShareStore.connect(region.redis());
          } catch (StoreUnavailableException e) {
            throw new StoreUnavailableException("region " + region.name() + ": " + e.getMessage(), e);
          }
        }
        return store;
      }

      @Override
      public long epoch() {
        return store().epoch();
      }

      @Override
      public List<String> keys(Limit limit, long window, int maxKeys) {
        return store().keys(limit, window, maxKeys);
      }

      @Override
      public RegionShareStore.Registry nodes() {
        return store().nodes();
      }

      @Override
      public List<RegionShareStore.KeyState> read(Limit limit, long window, List<String> keys) {
        return store().read(limit, window, keys);
      }

      @Override
      public RegionShareStore.WriteResult write(long epoch, Counter counter, long window, long nowMicros,
          Duration ttl, List<RegionShareStore.ShareWrite> writes) {
        return store().write(epoch, counter, window, nowMicros, ttl, writes);
      }

      @Override
      public synchronized void close() {
        if (store != null) {
          store.close();
          store = null;
        }
      }
    };
  }
}
