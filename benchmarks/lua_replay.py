#!/usr/bin/env python3
"""Replays the script calls a Redis run captured, against two redis-servers that each run one version
of flush.lua, and compares what Redis spends on them (benchmarks/lua-replay.sh runs it; see there).

    lua_replay.py MONITOR_FILE PORT_A FLUSH_A.lua PRELUDE_A.lua PORT_B FLUSH_B.lua PRELUDE_B.lua

(each PRELUDE: prelude.lua with that version's flush_lib.lua after it, as benchmarks/lua-replay.sh makes it)

Every EVALSHA of the capture goes to both servers, in chunks of 200 sent to one then the other, so that
both see the machine at the same moments (this VM's speed moves by 10% from one run to the next). The
answers must match call by call: a version that changes what the script decides is not a speed-up.
Prints, per server, the scripts' time (INFO commandstats, EVALSHA with the commands it calls), the
commands' own time, and the difference, Lua's. Only loopback.
"""
import hashlib
import re
import socket
import sys

TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"')
ESCAPES = {'n': b'\n', 'r': b'\r', 't': b'\t', 'a': b'\a', 'b': b'\b'}


class Redis:
    """A minimal RESP client: enough to load scripts, pipeline calls and read INFO."""

    def __init__(self, port):
        self.sock = socket.create_connection(('127.0.0.1', port))
        self.file = self.sock.makefile('rb')

    @staticmethod
    def encode(args):
        out = [b'*%d\r\n' % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b'$%d\r\n%s\r\n' % (len(a), a))
        return b''.join(out)

    def read(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b'+':
            return rest.decode()
        if kind == b'-':
            return RuntimeError(rest.decode())
        if kind == b':':
            return int(rest)
        if kind == b'$':
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2].decode('utf-8', 'replace')
        if kind == b'*':
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError('unexpected reply ' + repr(line))

    def call(self, *args):
        self.sock.sendall(self.encode(args))
        return self.read()

    def pipeline(self, commands):
        self.sock.sendall(b''.join(self.encode(c) for c in commands))
        return [self.read() for _ in commands]


def unescape(s):
    """MONITOR's quoting (sdscatrepr) undone."""
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == '\\':
            n = s[i + 1]
            if n == 'x':
                out.append(int(s[i + 2:i + 4], 16))
                i += 4
                continue
            out += ESCAPES.get(n, n.encode())
            i += 2
            continue
        out += s[i].encode('utf-8')
        i += 1
    return bytes(out)


def capture(path):
    """The scripts loaded (sha -> text) and the EVALSHA calls, in order, of a MONITOR capture."""
    scripts, calls = {}, []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            if '[0 lua]' in line or '"' not in line:
                continue  # (commands a script ran, and MONITOR's own OK)
            args = [unescape(t) for t in TOKEN.findall(line)]
            name = args[0].upper()
            if name == b'SCRIPT' and len(args) > 2 and args[1].upper() == b'LOAD':
                scripts[hashlib.sha1(args[2]).hexdigest()] = args[2]
            elif name == b'EVALSHA':
                calls.append(args)
    return scripts, calls


def script_time(r):
    """Microseconds in scripts (EVALSHA, the commands it ran included) and in the commands scripts ran."""
    scripts = commands = 0
    for line in r.call('INFO', 'commandstats').split('\r\n'):
        if not line.startswith('cmdstat_'):
            continue
        name = line.split(':')[0][len('cmdstat_'):]
        usec = int(line.split('usec=')[1].split(',')[0])
        if name in ('evalsha', 'eval'):
            scripts += usec
        elif not name.startswith(('config', 'info', 'script', 'flushall', 'hello', 'ping')):
            commands += usec
    return scripts, commands


def main():
    # (each side's prelude: prelude.lua followed by that side's flush_lib.lua, where it has one)
    monitor, port_a, flush_a, prelude_a, port_b, flush_b, prelude_b = sys.argv[1:8]
    scripts, calls = capture(monitor)
    if not calls:
        sys.exit('lua_replay: no EVALSHA in ' + monitor)
    servers = []
    for port, flush, prelude in ((port_a, flush_a, prelude_a), (port_b, flush_b, prelude_b)):
        prelude_text = open(prelude, 'rb').read()
        r = Redis(int(port))
        r.call('FLUSHALL')
        # flush.lua as LuaScript sends it (its name, then the prelude, then the script; the whole
        # prelude here, with that version's helpers), in place of the one the capture loaded
        text = b"local SCRIPT = 'flush'\n" + prelude_text + b'\n' + open(flush, 'rb').read()
        remap = {}
        for sha, src in scripts.items():
            if src.startswith(b"local SCRIPT = 'flush'"):
                remap[sha.encode()] = r.call('SCRIPT', 'LOAD', text).encode()
            else:
                r.call('SCRIPT', 'LOAD', src)
        r.call('CONFIG', 'RESETSTAT')
        servers.append((r, remap))
    differences = 0
    errors = [0, 0]
    for start in range(0, len(calls), 200):
        chunk = calls[start:start + 200]
        answers = []
        for i, (r, remap) in enumerate(servers):
            replies = r.pipeline([[c[0], remap.get(c[1], c[1])] + c[2:] for c in chunk])
            errors[i] += sum(1 for x in replies if isinstance(x, RuntimeError))
            answers.append([str(x) for x in replies])
        for a, b in zip(*answers):
            if a != b:
                differences += 1
                if differences <= 3:
                    print('different answers:\n  A ' + a[:300] + '\n  B ' + b[:300])
    print('%d script calls replayed; answers that differ: %d; errors A %d, B %d'
          % (len(calls), differences, errors[0], errors[1]))
    for label, (r, _), path in (('A', servers[0], flush_a), ('B', servers[1], flush_b)):
        scripts_us, commands_us = script_time(r)
        print('%s %-40s script time %.3f s (%.1f us a call), commands %.3f s, Lua %.3f s'
              % (label, path, scripts_us / 1e6, scripts_us / len(calls), commands_us / 1e6,
                 (scripts_us - commands_us) / 1e6))
    sys.exit(1 if differences else 0)


if __name__ == '__main__':
    main()
