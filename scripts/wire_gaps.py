#!/usr/bin/env python3
"""Request starts per server address as sent on the wire, from a packet capture: the ground
truth behind the per-address figures that scripts/bench_many_hosts_nginx.sh counts from
nginx's access log (whose 1-ms stamps come from each worker's cached clock).

    tcpdump -i lo -nn -tt -l -s 96 'tcp dst port PORT and (tcp[tcpflags] & tcp-push != 0)' > cap.txt &
    ... run the crawl ...
    python3 scripts/wire_gaps.py cap.txt --gap-ms 2

One client packet with PSH to the server's port is one HTTP request (a GET fits in one
segment); a request is "on a new connection" when its source port was not seen before.
Prints, over all addresses: requests, the smallest gap between two request starts to one
address, the gaps under --gap-ms (by connection kind of the pair), and the most starts in
any 100 ms to one address against what the gap allows (100 / gap).
"""

import argparse
import collections


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("capture", help="tcpdump -tt -nn text output")
    ap.add_argument("--gap-ms", type=float, default=2.0, help="the per-address gap the crawl used")
    a = ap.parse_args()
    by_addr = collections.defaultdict(list)
    sources = set()
    for line in open(a.capture):
        p = line.split()
        if len(p) < 5 or p[1] != "IP":
            continue
        src, dst = p[2], p[4].rstrip(":").rsplit(".", 1)[0]
        by_addr[dst].append((float(p[0]), src not in sources))
        sources.add(src)
    kind = {True: "new", False: "reused"}
    close = collections.Counter()
    pairs = collections.Counter()
    smallest, most = float("inf"), 0
    for starts in by_addr.values():
        starts.sort()
        for (t0, new0), (t1, new1) in zip(starts, starts[1:]):
            k = f"{kind[new0]}->{kind[new1]}"
            pairs[k] += 1
            gap = (t1 - t0) * 1000
            smallest = min(smallest, gap)
            close[k] += gap < a.gap_ms
        j = 0
        for i, (t, _) in enumerate(starts):
            while starts[j][0] <= t - 0.1:
                j += 1
            most = max(most, i - j + 1)
    n = sum(len(s) for s in by_addr.values())
    print(f"{n} requests to {len(by_addr)} addresses; smallest gap {smallest:.3f} ms; "
          f"{sum(close.values())} of {sum(pairs.values())} gaps under {a.gap_ms:g} ms "
          f"({', '.join(f'{k} {close[k]} of {pairs[k]}' for k in sorted(pairs))}); "
          f"most starts in 100 ms {most} (the gap allows {int(100 / a.gap_ms)})")


if __name__ == "__main__":
    main()
