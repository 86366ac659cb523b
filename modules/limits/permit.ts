/**
 * A held unit of capacity. `release` is idempotent, so every exit path (success, error, timeout,
 * disconnect, exception) may call it without counting twice.
 */
export interface Permit {
  release(): void;
}

export const NO_PERMIT: Permit = Object.freeze({ release: () => undefined });

/** A permit that runs `onRelease` once, on the first release. */
export function permit(onRelease: () => void): Permit {
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      onRelease();
    },
  };
}

/** Several permits released together, in reverse order of acquisition. */
export function permits(held: readonly Permit[]): Permit {
  return permit(() => {
    for (let i = held.length - 1; i >= 0; i--) held[i].release();
  });
}
