"""gdnsd 3 as `make bench` runs it: the zone of dns_zone written as gdnsd
configuration (metafo, weighted and geoip plugins for the routed names),
checked with `gdnsd checkconf` so a configuration error is reported as such,
not as wrong answers."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.bench import dns_zone as z
from tests.bench.dns_launch import Running, spawn, stop, wait_ready, write_files
from tests.bench.dns_programs import tool
from tests.support.ports import free_port


def gdnsd_files(folder: Path, port: int, serial: int) -> dict[str, str]:
    weighted = "\n".join(f"      {n} => [ {a}, {w} ]" for n, a, w in z.WEIGHTED)
    sip = "\n".join(f"      {n} => [ {a}, {w} ]" for n, a, w in z.SIP)
    # weighted with multi = true over groups returns one address from each group
    # whose weight is the highest (all equal here): two groups of two give
    # exactly 2 of the 4 addresses, at random, in every answer
    m = z.MULTI
    config = f"""\
options => {{
  listen => [ 127.0.0.1:{port} ]
  run_dir => {folder}/run
  state_dir => {folder}/state
  edns_client_subnet => true
}}
plugins => {{
  metafo => {{
    resources => {{
      prio => {{
        datacenters => [ primary, secondary ]
        dcmap => {{ primary => {z.PRIORITY[0]}, secondary => {z.PRIORITY[1]} }}
      }}
    }}
  }}
  weighted => {{
    weighted_res => {{
{weighted}
    }}
    sip_res => {{
{sip}
    }}
    multi_res => {{
      multi => true
      g1 => {{ m1 => [ {m[0]}, 1 ], m3 => [ {m[2]}, 1 ] }}
      g2 => {{ m2 => [ {m[1]}, 1 ], m4 => [ {m[3]}, 1 ] }}
    }}
  }}
  geoip => {{
    maps => {{
      net => {{
        datacenters => [ other, inside ]
        nets => nets
      }}
    }}
    resources => {{
      net => {{
        map => net
        dcmap => {{ inside => {z.NET_INSIDE}, other => {z.NET_OTHER} }}
      }}
    }}
  }}
}}
"""
    refresh, retry, expire, minimum = z.SOA_TIMERS
    srv = "".join(
        f"_sip._udp.sip SRV {z.SIP_PRIORITY} {w} {z.SIP_PORT} {n}.sip\n"
        for n, _a, w in z.SIP
    )
    targets = "".join(f"{n}.sip A {a}\n" for n, a, _w in z.SIP)
    zone = f"""\
$TTL {z.TTL}
@ {z.SOA_TTL} SOA ns1 hostmaster {serial} {refresh} {retry} {expire} {minimum}
@ {z.SOA_TTL} NS ns1
ns1 {z.SOA_TTL} A {z.NS_ADDRESS}
prio DYNA metafo!prio
weighted DYNA weighted!weighted_res
multi DYNA weighted!multi_res
sip DYNA weighted!sip_res
{srv}{targets}net DYNA geoip!net
geo DYNA geoip!net
"""
    return {
        "config": config,
        "zones/tm.example": zone,
        "geoip/nets": f"{z.NET_RANGE} => [ inside ]\n",
    }


@contextlib.contextmanager
def gdnsd(workdir: Path, serial: int) -> Iterator[Running]:
    folder = workdir / "gdnsd"
    folder.mkdir()
    port = free_port()
    files = gdnsd_files(folder, port, serial)
    write_files(folder, files)
    gdnsd_bin = tool("gdnsd")
    check = subprocess.run(
        [gdnsd_bin, "-c", str(folder), "checkconf"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check.returncode != 0:
        raise RuntimeError(f"gdnsd checkconf failed:\n{check.stderr}")
    log = folder / "gdnsd.log"
    process = spawn([gdnsd_bin, "-c", str(folder), "start"], log)
    try:
        running = Running("gdnsd", "gdnsd", port, serial, process, False, files)
        wait_ready(running, log)
        yield running
    finally:
        stop(process)
