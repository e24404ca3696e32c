/**
 * The open sessions of each client address, capped at `max` (the MX's and the relay's per-address limit):
 * `open` counts one more unless the address is at the cap (it then answers how many it has), `close` one
 * less, forgetting an address with none left.
 */
export function createSessionsPerAddress(max: number) {
  const open = new Map<string, number>();
  return {
    open(ip: string): { ok: true } | { ok: false; open: number } {
      const count = open.get(ip) ?? 0;
      if (count >= max) return { ok: false, open: count };
      open.set(ip, count + 1);
      return { ok: true };
    },
    close(ip: string): void {
      const count = (open.get(ip) ?? 1) - 1;
      if (count > 0) open.set(ip, count);
      else open.delete(ip);
    },
  };
}
