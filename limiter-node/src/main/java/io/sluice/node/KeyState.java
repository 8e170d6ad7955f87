package io.sluice.node;

/** The per-key state of one algorithm. Subclasses are as small as the algorithm allows. */
abstract class KeyState {
}
