"""Write the nginx config for K course servers from deploy/nginx.conf.template (stdlib only).

    python deploy/nginx_conf.py STATE_DIR LISTEN PORT [PORT ...]  > STATE_DIR/nginx.conf

LISTEN is nginx's address (e.g. 127.0.0.1:8080); each PORT is one course server on 127.0.0.1.
Process n (0-based) is pinned by the cookie value `n` (see the template's comment on stickiness).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

TEMPLATE = Path(__file__).with_name("nginx.conf.template")
USAGE = "usage: python deploy/nginx_conf.py STATE_DIR LISTEN PORT [PORT ...]"


def render(state: str, listen: str, ports: list[int]) -> str:
    """The template with every @NAME@ filled in; raises ValueError on a bad port list."""
    if not ports or len(set(ports)) != len(ports) or not all(0 < p < 65536 for p in ports):
        raise ValueError(f"need distinct ports in 1..65535, got {ports}")
    addrs = [f"127.0.0.1:{p}" for p in ports]
    pinned = []
    for n, addr in enumerate(addrs):
        lines = [f"        server {addr};"] + [f"        server {a} backup;" for a in addrs if a != addr]
        pinned.append(f"    upstream course_{n} {{\n" + "\n".join(lines) + "\n    }")
    fill = {
        "STATE": state,
        "LISTEN": listen,
        "SERVERS_ANY": "\n".join(f"        server {a};" for a in addrs),
        "UPSTREAMS_PINNED": "\n".join(pinned),
        "PIN_TO_UPSTREAM": "\n".join(f'        "{n}" course_{n};' for n in range(len(addrs))),
        "PIN_KNOWN": "\n".join(f'        "{n}" 1;' for n in range(len(addrs))),
        "ADDR_TO_PIN": "\n".join(f'        "{a}" {n};' for n, a in enumerate(addrs)),
    }
    text = TEMPLATE.read_text()
    for name, value in fill.items():
        text = text.replace(f"@{name}@", value)
    leftover = re.findall(r"@[A-Z_]+@", text)
    if leftover:
        raise ValueError(f"unfilled template fields: {leftover}")
    return text


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        sys.stdout.write(render(argv[0], argv[1], [int(p) for p in argv[2:]]))
    except ValueError as error:
        print(f"nginx_conf: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
