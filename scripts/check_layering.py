#!/usr/bin/env python3
"""The one-way rule of ../shared/DESIGN.md section 2, on includes and on link targets.

    support <- isa <- sim <- runtime <- compiler <- tools

usage: check_layering.py [--graph FILE] [ROOT]

ROOT is the source tree (default: this script's ../). Prints every violation, one a line, and
exits 1 if there is any, else prints "layering: ok (...)" and exits 0. Checks:

 1. includes: a C++ file of a room may include (#include "room/...") only its own room and the
    rooms that room may depend on (ALLOWED below);
 2. with --graph (the target graph CMake writes at configure time, cmake/TesselLinkGraph.cmake):
    a. links: every target a room's target links, directly or through other targets, belongs to
       a room that room may depend on (SystemC counts as sim: EXTERNAL_ROOMS). The compiler
       reaches no simulator: it links the runtime's core, not the device library; only a
       compiler/autotune target may reach sim;
    b. uses: a target whose file includes a header of another of our libraries links that
       library (directly or through other targets). A header belongs to the library that
       compiles the source of the same name (x.h: x.cc), else to the one library that compiles
       sources of its folder; a header of no library (header-only) needs no link.
tests/, bench/, examples/ and fuzz/ may include and link everything; hw/ holds SystemVerilog.
"""
import argparse
import collections
import os
import re
import sys

ROOMS = ["support", "isa", "sim", "runtime", "compiler", "tools"]
# What each room (and the one sub-room with its own rule) may depend on, itself included.
ALLOWED = {
    "support": {"support"},
    "isa": {"support", "isa"},
    "sim": {"support", "isa", "sim"},
    "runtime": {"support", "isa", "sim", "runtime"},
    "compiler": {"support", "isa", "runtime", "compiler"},
    # measurement: the only compiler part that may run the simulators (DESIGN.md, inside compiler/)
    "compiler/autotune": {"support", "isa", "sim", "runtime", "compiler"},
    "tools": set(ROOMS),
}
# External libraries that belong to a room: linking one counts as linking that room.
EXTERNAL_ROOMS = {"PkgConfig::SYSTEMC": "sim"}
CXX_EXT = (".h", ".hpp", ".cc", ".cpp")
SRC_EXT = (".cc", ".cpp", ".c")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def room_key(path):
    """Rule key of a path relative to the root: a room, 'compiler/autotune', or its first folder."""
    parts = path.split("/")
    if parts[0] == "compiler" and len(parts) > 1 and parts[1] == "autotune":
        return "compiler/autotune"
    return parts[0]


def room_of_key(key):
    """The room (first folder) a rule key belongs to."""
    return key.split("/")[0]


def allowed_for(folder):
    """The rooms a target defined in `folder` may link; None for tests/, bench/, ... (anything)."""
    key = room_key(folder)
    return ALLOWED.get(key, ALLOWED.get(room_of_key(key)))


def cxx_files(root):
    """Every C++ file of the rooms, relative to root, sorted."""
    out = []
    for room in ROOMS:
        base = os.path.join(root, room)
        for d, subdirs, files in os.walk(base):
            subdirs.sort()
            for f in sorted(files):
                if f.endswith(CXX_EXT):
                    out.append(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/"))
    return out


def includes_of(root, path):
    """(line number, included path) of every quoted include of a file."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            m = INCLUDE_RE.match(line)
            if m:
                yield n, m.group(1)


def check_includes(root, files):
    bad = []
    for path in files:
        key = room_key(path)
        for n, inc in includes_of(root, path):
            if "/" not in inc:
                continue
            target = inc.split("/")[0]
            if target not in ROOMS:
                continue
            if target not in ALLOWED[key]:
                bad.append(f'{path}:{n}: {room_of_key(key)} may not include {target} '
                           f'(#include "{inc}")')
    return bad


def read_graph(path):
    """name -> (type, folder, [link items], [sources]) from tessel_link_graph.tsv."""
    graph = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            fields = line.split("\t")
            if len(fields) != 5:
                raise SystemExit(f"{path}:{n}: expected 5 tab-separated fields, got {len(fields)}")
            name, kind, folder, links, sources = fields
            graph[name] = (kind, folder, [x for x in links.split(";") if x],
                           [x for x in sources.split(";") if x])
    for lib, room in EXTERNAL_ROOMS.items():
        graph.setdefault(lib, ("EXTERNAL", room, [], []))
    return graph


def link_targets(graph, name):
    """Our targets that `name` links directly ($<LINK_ONLY:x> is x; external items dropped)."""
    out = []
    for item in graph[name][2]:
        m = re.fullmatch(r"\$<LINK_ONLY:(.+)>", item)
        if m:
            item = m.group(1)
        if item in graph and item != name and item not in out:
            out.append(item)
    return out


def reach(graph, name):
    """Every target `name` links, directly or through others, mapped to a chain of links to it."""
    paths = {name: [name]}
    queue = collections.deque([name])
    while queue:
        t = queue.popleft()
        for d in link_targets(graph, t):
            if d not in paths:
                paths[d] = paths[t] + [d]
                queue.append(d)
    del paths[name]
    return paths


def check_links(graph):
    bad = []
    for name in sorted(graph):
        key = room_key(graph[name][1])
        allowed = allowed_for(graph[name][1])
        if allowed is None:
            continue  # tests/, bench/, examples/, fuzz/: anything
        # breadth first, not past a forbidden target: each forbidden target is named once, with
        # the shortest chain of links that reaches it
        seen = {name}
        queue = collections.deque([[name]])
        while queue:
            path = queue.popleft()
            for d in link_targets(graph, path[-1]):
                if d in seen:
                    continue
                seen.add(d)
                droom = room_of_key(room_key(graph[d][1]))
                if droom in allowed:
                    queue.append(path + [d])
                    continue
                via = "" if len(path) == 1 else " through " + " -> ".join(path + [d])
                bad.append(f"link: {name} ({graph[name][1]}) links {d} ({graph[d][1]}){via}: "
                           f"{room_of_key(key)} may not link {droom}")
    return bad


def header_owners(graph, files):
    """Header path -> the library that owns it (see the module docstring, rule 2b)."""
    by_source = {}
    by_folder = collections.defaultdict(set)
    # only the rooms' targets own files (a test may compile a room's source into itself); a
    # source two of them compile belongs to the first by name
    for name in sorted(graph):
        if allowed_for(graph[name][1]) is None:
            continue
        for s in graph[name][3]:
            if s.endswith(SRC_EXT):
                by_source.setdefault(s, name)
                by_folder[os.path.dirname(s)].add(name)
    owners = {}
    for path in files:
        if path.endswith(SRC_EXT):
            if path in by_source:
                owners[path] = by_source[path]
            continue
        stem = os.path.splitext(path)[0]
        owner = next((by_source[stem + e] for e in SRC_EXT if stem + e in by_source), None)
        if owner is None and len(by_folder.get(os.path.dirname(path), ())) == 1:
            owner = next(iter(by_folder[os.path.dirname(path)]))
        if owner is not None:
            owners[path] = owner
    return owners


def check_uses(root, graph, files):
    bad = []
    owners = header_owners(graph, files)
    files_of = collections.defaultdict(list)
    for path, owner in owners.items():
        files_of[owner].append(path)
    for name in sorted(files_of):
        if allowed_for(graph[name][1]) is None:
            continue
        linked = reach(graph, name)
        missing = {}
        for path in sorted(files_of[name]):
            for n, inc in includes_of(root, path):
                lib = owners.get(inc)
                if lib is None or lib == name or lib in linked or lib in missing:
                    continue
                missing[lib] = f"{path}:{n} includes {inc}"
        for lib, where in sorted(missing.items()):
            bad.append(f"link: {name} ({graph[name][1]}) uses {lib} ({where}) but does not link it")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--graph", help="tessel_link_graph.tsv of a configured build folder")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if not os.path.isdir(root):
        print(f"layering: no such folder {root}", file=sys.stderr)
        return 2
    files = cxx_files(root)
    bad = check_includes(root, files)
    what = f"includes of {len(files)} files"
    if args.graph:
        if not os.path.isfile(args.graph):
            print(f"layering: no target graph {args.graph} (configure the build first)",
                  file=sys.stderr)
            return 2
        graph = read_graph(args.graph)
        bad += check_links(graph)
        bad += check_uses(root, graph, files)
        ours = sum(1 for v in graph.values() if v[0] != "EXTERNAL")
        what += f", links of {ours} targets"
    for line in bad:
        print(line)
    if bad:
        return 1
    print(f"layering: ok ({what}; rooms: {' '.join(ROOMS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
