#!/usr/bin/env python3
"""Regenerates docs/configuration.md from the modules' reference.conf files.

Each key is documented in reference.conf (what it does, units, '# Env:' and '# Reloadable:'
footers); this script turns those comments into one table per module. ConfigDocumentationTest
fails when the doc no longer lists every environment variable.
Usage: scripts/gen-configuration-doc.py > docs/configuration.md
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = [
    ("server", "Server: data directory, HTTP, admin login, embedded Cassandra, payload parsing, shutdown"),
    ("fleet", "Fleet services: server-side RPC, provisioning, OTA packages"),
    ("transport-common", "Device transports, shared (device bounds, firmware downloads over MQTT and HTTP)"),
    ("transport-mqtt", "MQTT transport"),
    ("transport-http", "HTTP device transport (ThingsBoard's HTTP device API)"),
    ("actors", "Device actors"),
    ("dao-cassandra", "Cassandra storage"),
    ("cluster", "Cluster (ZooKeeper membership, ring, gRPC forwarding; see [cluster.md](cluster.md))"),
    ("export", "Export: delivery of the change feed to sinks (see [export.md](export.md))"),
]


def parse(path):
    """(key, default, env, text) per key; env comes from the key's `${?ENV}` override line."""
    entries, comment, stack, block_comments = [], [], [], []
    for raw in open(path, encoding="utf-8"):
        line = raw.strip()
        if line.startswith("#"):
            comment.append(line.lstrip("#").strip())
            continue
        if not line:
            continue
        m = re.match(r'^([A-Za-z0-9_.\-"]+)\s*\{$', line)
        if m:
            stack.append(m.group(1).strip('"'))
            block_comments.append(comment)
            comment = []
            continue
        if line == "}":
            if stack:
                stack.pop()
                block_comments.pop()
            comment = []
            continue
        m = re.match(r'^([A-Za-z0-9_.\-"]+)\s*[=:]\s*(.*)$', line)
        if not m:
            comment = []
            continue
        key = ".".join(stack + [m.group(1).strip('"')])
        value = m.group(2).strip()
        env = re.match(r'^\$\{\?([A-Z0-9_]+)\}$', value)
        if env:
            for i in range(len(entries) - 1, -1, -1):
                if entries[i][0] == key:
                    entries[i] = (key, entries[i][1], env.group(1), entries[i][3])
                    break
            continue
        own = comment or (block_comments[-1] if block_comments else [])
        text = " ".join(c for c in own if c and not c.startswith(("Env:", "Reloadable:")))
        entries.append((key, value, "", text))
        comment = []
    return entries


def main():
    out = sys.stdout
    out.write("# Configuration\n\n")
    out.write("One HOCON stack: each module's `reference.conf` holds its keys under `fieldline`, the\n"
              "server's `application.conf` adds Pekko settings, and the Cassandra driver reads its own\n"
              "`datastax-java-driver { }` block from the same configuration. Every `fieldline` key can be\n"
              "overridden by the environment variable named below (or by `-Dkey=value`, or an\n"
              "`application.conf` passed with `-Dconfig.file=`). No key is reloadable: restart to apply.\n\n"
              "Generated from the `reference.conf` files by `scripts/gen-configuration-doc.py`;\n"
              "`ConfigDocumentationTest` fails when this page misses a variable.\n")
    for module, title in MODULES:
        path = os.path.join(ROOT, module, "src/main/resources/reference.conf")
        if not os.path.exists(path):
            continue
        out.write(f"\n## {title}\n\n| key | default | environment variable | meaning |\n| --- | --- | --- | --- |\n")
        for key, default, env, text in parse(path):
            if key.startswith("pekko"):
                continue
            env_cell = f"`{env}`" if env else ""
            out.write(f"| `{key}` | `{default}` | {env_cell} | {text.replace('|', '/')} |\n")
    out.write("\n## Logging\n\n`FIELDLINE_LOG_LEVEL` (default `INFO`) sets the root level of the server's "
              "`logback.xml`; any `-Dlogback.configurationFile=` replaces that file.\n")
    out.write("\nKeys under `datastax-java-driver` are the Cassandra driver's own (tuned, not defaulted; see "
              "[storage.md](storage.md)); any other driver option can be overridden with "
              "`-Ddatastax-java-driver.<path>=...`.\n")


if __name__ == "__main__":
    main()
