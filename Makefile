# offloadfs -- one plain GNU Makefile. CC, CFLAGS, LDFLAGS, PREFIX, DESTDIR
# are yours to override; the flags the build needs live in REQ_* so a user's
# CFLAGS cannot drop them.
CC      ?= cc
CFLAGS  ?= -O2 -g
LDFLAGS ?=
PREFIX  ?= /usr/local
DESTDIR ?=
PYTHON  ?= python3

VERSION  := 0.1.0
SOVER    := 0
WARN     := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 -Wconversion
REQ_CFLAGS := $(WARN) -D_GNU_SOURCE -DOFFLOADFS_VERSION='"$(VERSION)"' -fPIC -I. \
              $(shell pkg-config --cflags fuse3 libcjson 2>/dev/null)
REQ_LIBS_STORE := -llmdb -lzstd -lpthread
# No program links libcurl: remote/curl_load.c dlopen()s it when a store's
# remote is first opened, so a process whose store names no remote loads no
# HTTP or TLS library. -ldl for dlopen() (in libc itself since glibc 2.34).
REQ_LIBS_DL    := -ldl
REQ_LIBS_AL    := -lcjson $(REQ_LIBS_DL) $(REQ_LIBS_STORE)
# The daemon's GET /metrics (fs/metrics.c) is served by libmicrohttpd.
REQ_LIBS_FS    := -lfuse3 -lcjson $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd) \
                  $(REQ_LIBS_STORE)
# The remote tier (remote/, libremote.a): linked only into what uses it;
# libcurl is not among them (loaded at run time, remote/curl_load.h).
REQ_LIBS_REMOTE := $(REQ_LIBS_DL) -lpthread

B := build
LIBDIR ?= $(PREFIX)/lib

STORE_SRC := $(wildcard store/*.c)
# The leaf every program links (libcommon.a): policy loading, settings
# resolution, buffers, the monotonic clock, the walk up through "..".
COMMON_SRC := $(wildcard common/*.c)
FS_SRC    := $(wildcard fs/*.c)
# The Prometheus formatter, linked into the daemon and the CLI.
METRICS_SRC := $(wildcard metrics/*.c)
# Each part builds from its own directory: agentlink/ is the library,
# agentlink/mcp/ the MCP proxy (an internal static library linked only into
# the command, its tests and its fuzz target), agentlink/cli/ the command.
AL_LIB_SRC := $(wildcard agentlink/*.c)
MCP_SRC    := $(wildcard agentlink/mcp/*.c)
AL_CLI_SRC := $(wildcard agentlink/cli/*.c)

STORE_OBJ := $(STORE_SRC:%.c=$(B)/obj/%.o)
COMMON_OBJ := $(COMMON_SRC:%.c=$(B)/obj/%.o)
FS_OBJ    := $(FS_SRC:%.c=$(B)/obj/%.o)
METRICS_OBJ := $(METRICS_SRC:%.c=$(B)/obj/%.o)
REMOTE_SRC := $(wildcard remote/*.c)
TIER_SRC   := $(wildcard tier/*.c)
REMOTE_OBJ := $(REMOTE_SRC:%.c=$(B)/obj/%.o)
# The in-memory remote (remote/mem/): remote.h again, for unit tests only.
REMOTE_MEM_SRC := $(wildcard remote/mem/*.c)
REMOTE_MEM_OBJ := $(REMOTE_MEM_SRC:%.c=$(B)/obj/%.o) $(B)/obj/remote/codes.o $(B)/obj/remote/options.o
TIER_OBJ   := $(TIER_SRC:%.c=$(B)/obj/%.o)
AL_LIB_OBJ := $(AL_LIB_SRC:%.c=$(B)/obj/%.o)
MCP_OBJ    := $(MCP_SRC:%.c=$(B)/obj/%.o)
AL_CLI_OBJ := $(AL_CLI_SRC:%.c=$(B)/obj/%.o)

TEST_SRC  := $(wildcard tests/common/test_*.c tests/store/test_*.c tests/agentlink/test_*.c tests/mcp/test_*.c \
             tests/fs/test_*.c tests/metrics/test_*.c tests/remote/test_*.c tests/tier/test_*.c)
TEST_BIN  := $(TEST_SRC:tests/%.c=$(B)/tests/%)
TOOL_SRC  := $(wildcard tests/tools/*.c)
TOOL_BIN  := $(TOOL_SRC:tests/tools/%.c=$(B)/tools/%)
BENCH_BIN := $(patsubst scripts/bench/%.c,$(B)/bench/%,$(wildcard scripts/bench/*.c))
FAULT_BIN := $(patsubst tests/faults/%.c,$(B)/faults/%,$(wildcard tests/faults/*.c))

PROGS := $(B)/libcommon.a $(B)/libstore.a $(B)/libremote.a $(B)/libtier.a
ifneq ($(AL_LIB_SRC),)
PROGS += $(B)/libagentlink.a $(B)/libagentlink.so
endif
ifneq ($(AL_CLI_SRC),)
PROGS += $(B)/agentlink
endif
ifneq ($(FS_SRC),)
PROGS += $(B)/offloadfs
endif

.PHONY: all deps test test-unit test-asan test-tsan test-valgrind check-faults fuzz run stop demo bench install \
        uninstall clean
all: $(PROGS) $(TEST_BIN) $(TOOL_BIN) $(BENCH_BIN) $(FAULT_BIN)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/libstore.a: $(STORE_OBJ)
	@mkdir -p $(B)
	rm -f $@ && ar rcs $@ $^

$(B)/libcommon.a: $(COMMON_OBJ)
	@mkdir -p $(B)
	rm -f $@ && ar rcs $@ $^

$(B)/libremote.a: $(REMOTE_OBJ)
	@mkdir -p $(B)
	rm -f $@ && ar rcs $@ $^

# A test links libremote_mem.a instead of libremote.a: the same functions
# over buckets in memory, with faults on demand (remote/mem/mem.h).
$(B)/libremote_mem.a: $(REMOTE_MEM_OBJ)
	@mkdir -p $(B)
	rm -f $@ && ar rcs $@ $^

# The tier (store + remote glue): libtier.a, used with libremote.a and a store.
$(B)/libtier.a: $(TIER_OBJ)
	@mkdir -p $(B)
	rm -f $@ && ar rcs $@ $^

# The library writes through the remote tier (tier/, remote/: libcurl,
# loaded when a remote is first used). Two archives of it: libal.a holds
# agentlink/'s own objects, for the programs and tests of this tree, which
# link each layer below from its own archive (AL_LINK), so no object is
# linked twice; libagentlink.a, the one installed, bundles the same objects
# with every layer below, so a user's program needs no other archive.
$(B)/libal.a: $(AL_LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/libagentlink.a: $(AL_LIB_OBJ) $(TIER_OBJ) $(REMOTE_OBJ) $(STORE_OBJ) $(COMMON_OBJ)
	rm -f $@ && ar rcs $@ $^

# What a program of the tree links for the library, in link order.
AL_LINK := $(B)/libal.a $(B)/libtier.a $(B)/libremote.a $(B)/libstore.a $(B)/libcommon.a

# Only the API (al_*) is exported: agentlink/agentlink.map.
$(B)/libagentlink.so: $(AL_LIB_OBJ) $(TIER_OBJ) $(REMOTE_OBJ) $(STORE_OBJ) $(COMMON_OBJ) agentlink/agentlink.map
	$(CC) -shared -Wl,-soname,libagentlink.so.$(SOVER) -Wl,--version-script=agentlink/agentlink.map \
	  $(LDFLAGS) -o $@ $(filter %.o,$^) $(REQ_LIBS_AL)

$(B)/libmcp.a: $(MCP_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/agentlink: $(AL_CLI_OBJ) $(METRICS_OBJ) $(B)/libmcp.a $(AL_LINK)
	$(CC) $(LDFLAGS) -o $@ $(AL_CLI_OBJ) $(METRICS_OBJ) $(B)/libmcp.a $(AL_LINK) $(REQ_LIBS_AL)

# The daemon reads the policy file with the loader the library uses
# (common/, fs/config.c) and serves the remote tier through libtier.a and
# libremote.a (fs/conn.c, fs/lookup.c, fs/window.c, fs/listing.c:
# tier/reader.h only); it links nothing of agentlink/.
$(B)/offloadfs: $(FS_OBJ) $(METRICS_OBJ) $(B)/libtier.a $(B)/libremote.a $(B)/libstore.a $(B)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $(FS_OBJ) $(METRICS_OBJ) $(B)/libtier.a $(B)/libremote.a $(B)/libstore.a \
	  $(B)/libcommon.a $(REQ_LIBS_FS) $(REQ_LIBS_REMOTE)

# Unit tests: one cmocka binary per file. A test may ask for LMDB calls to be
# wrapped (fault injection) by listing them in a "WRAP:" comment line.
$(B)/tests/store/%: tests/store/%.c $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libstore.a $(B)/libcommon.a \
	  $$(sed -n 's|^/\* WRAP: \(.*\) \*/|\1|p' $<) -lcmocka $(REQ_LIBS_STORE)
# The leaf alone (common/); a test may read the store's header for its
# constants (the defaults common/ repeats), not link it.
$(B)/tests/common/%: tests/common/%.c $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libcommon.a -lcmocka -lcjson
# The library's tests over the in-memory remote (test_mem_*): no server, so
# they run under ThreadSanitizer too.
$(B)/tests/agentlink/test_mem_%: tests/agentlink/test_mem_%.c $(B)/libal.a $(B)/libtier.a \
  $(B)/libremote_mem.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libal.a $(B)/libtier.a $(B)/libremote_mem.a \
	  $(B)/libstore.a $(B)/libcommon.a -lcmocka $(REQ_LIBS_AL)
$(B)/tests/agentlink/%: tests/agentlink/%.c $(AL_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(AL_LINK) \
	  $$(sed -n 's|^/\* WRAP: \(.*\) \*/|\1|p' $<) -lcmocka $(REQ_LIBS_AL)
$(B)/tests/metrics/%: tests/metrics/%.c $(METRICS_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(METRICS_OBJ) -lcmocka
$(B)/tests/mcp/%: tests/mcp/%.c $(B)/libmcp.a $(AL_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libmcp.a $(AL_LINK) \
	  $$(sed -n 's|^/\* WRAP: \(.*\) \*/|\1|p' $<) -lcmocka $(REQ_LIBS_AL)
# The daemon's parts that run without a mount (fs/decode.c), over the store.
FS_UNIT_OBJ := $(B)/obj/fs/decode.o
$(B)/tests/fs/%: tests/fs/%.c $(FS_UNIT_OBJ) $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(FS_UNIT_OBJ) $(B)/libstore.a $(B)/libcommon.a -lcmocka \
	  -lfuse3 $(REQ_LIBS_STORE)
# The daemon's remote read path (lookups, windows, listings) without FUSE
# or Ceph: its objects over the tier and the in-memory remote; a test
# wraps the fuse_reply_* calls it answers with (its "WRAP:" line).
FS_REMOTE_OBJ := $(addprefix $(B)/obj/fs/,conn.o counters.o errmap.o fill.o keep.o listing.o lookup.o window.o)
$(B)/tests/fs/test_remote_%: tests/fs/test_remote_%.c $(FS_REMOTE_OBJ) $(B)/libtier.a $(B)/libremote_mem.a \
  $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(FS_REMOTE_OBJ) $(B)/libtier.a $(B)/libremote_mem.a \
	  $(B)/libstore.a $(B)/libcommon.a $$(sed -n 's|^/\* WRAP: \(.*\) \*/|\1|p' $<) -lcmocka -lfuse3 -lpthread $(REQ_LIBS_STORE)
# The remote tests run against a real radosgw (tests/run.sh starts one).
$(B)/tests/remote/%: tests/remote/%.c $(B)/libremote.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libremote.a $(B)/libcommon.a -lcmocka $(REQ_LIBS_REMOTE)
$(B)/tests/tier/%: tests/tier/%.c $(B)/libtier.a $(B)/libremote.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libtier.a $(B)/libremote.a $(B)/libstore.a \
	  $(B)/libcommon.a \
	  -lcmocka $(REQ_LIBS_REMOTE) $(REQ_LIBS_STORE)
# The tier's unit tests (test_mem_*) run over the in-memory remote: no
# server, no FUSE.
$(B)/tests/tier/test_mem_%: tests/tier/test_mem_%.c tests/tier/memfx.h $(B)/libtier.a $(B)/libremote_mem.a \
  $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libtier.a $(B)/libremote_mem.a $(B)/libstore.a \
	  $(B)/libcommon.a -lcmocka -lpthread $(REQ_LIBS_STORE)
# The tier's driver for the shell tests (before the tools' pattern rule).
$(B)/tools/tierctl: tests/tools/tierctl.c tests/tools/readin.h $(B)/libtier.a $(B)/libremote.a $(B)/libstore.a \
  $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libtier.a $(B)/libremote.a $(B)/libstore.a \
	  $(B)/libcommon.a $(REQ_LIBS_REMOTE) $(REQ_LIBS_STORE)
# Small C drivers used by shell tests and benchmarks.
$(B)/tools/%: tests/tools/%.c tests/tools/readin.h $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libstore.a $(B)/libcommon.a $(REQ_LIBS_STORE)

$(B)/bench/%: scripts/bench/%.c $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libstore.a $(B)/libcommon.a $(REQ_LIBS_STORE)

deps:
	@scripts/deps.sh

run: deps
	@$(MAKE) --no-print-directory $(PROGS)
	@scripts/run.sh

stop:
	@scripts/run.sh stop

demo: deps
	@$(MAKE) --no-print-directory $(PROGS)
	@scripts/demo.sh

bench: deps
	$(MAKE) all
	scripts/bench.sh

test: deps
	$(MAKE) all
	tests/run.sh

test-unit: all
	tests/run.sh unit

# The whole suite again under AddressSanitizer + UBSan, in its own build dir.
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
test-asan: deps
	$(MAKE) B=build-asan CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" all
	OFFLOADFS_BUILD=build-asan tests/run.sh

# ThreadSanitizer over the tests that drive the store and the library from
# many threads at once (handles opened, used and closed concurrently, fork;
# the wake-up's threads): those tests only, in their own build dir, and run
# by the filter that matches what that dir holds.
TSAN := -fsanitize=thread -fno-omit-frame-pointer
TSAN_TESTS := tests/store/test_threads tests/agentlink/test_threads tests/agentlink/test_mem_uploads \
  tests/store/test_wake
test-tsan: deps
	$(MAKE) B=build-tsan CFLAGS="-O1 -g $(TSAN)" LDFLAGS="$(TSAN)" \
	  build-tsan/libagentlink.so $(TSAN_TESTS:%=build-tsan/%)
	OFFLOADFS_BUILD=build-tsan tests/run.sh build-tsan/tests/

# The unit tests, the CLI and the daemon under valgrind (memcheck).
test-valgrind: deps
	$(MAKE) all
	OFFLOADFS_VALGRIND=1 tests/run.sh

# Drivers of the fault and load tests (tests/faults), over the library.
$(B)/faults/%: tests/faults/%.c tests/faults/content.h $(AL_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(AL_LINK) $(REQ_LIBS_AL)

# The slow fault and load checks (tests/faults/check_*.sh: 64 writers, the
# corruption sweep, churn under readers); .ci/run runs them after make test.
check-faults: deps
	$(MAKE) all
	tests/run.sh check-faults

# libFuzzer targets (clang), each run for FUZZ_SECONDS on top of the corpus
# committed under tests/fuzz/corpus/NAME; new inputs go to a scratch dir.
# FUZZ_SEED fixes the mutations, so a run repeats (0: a random seed). The
# sources under test are compiled once for all targets (fuzzer-no-link:
# instrumented, no main), and the targets run side by side under make -j
# (fuzz-run-NAME: each is one process on one core).
FUZZ_SECONDS ?= 20
FUZZ_SEED ?= 1
FUZZ_CC ?= clang
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_RUN := $(FUZZ_SRC:tests/fuzz/%.c=fuzz-run-%)
FUZZ_CFLAGS := -g -O1 -D_GNU_SOURCE -DOFFLOADFS_VERSION='"$(VERSION)"' -I. $(shell pkg-config --cflags libcjson)
FUZZ_SAN := address,undefined
FUZZ_OBJ := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(STORE_SRC) $(COMMON_SRC) $(AL_LIB_SRC) $(TIER_SRC) $(REMOTE_SRC))
$(B)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -MMD -MP -c $< -o $@
# fuzz_mcp alone also takes the proxy's sources.
$(B)/fuzz/fuzz_mcp: $(MCP_SRC:%.c=$(B)/fuzz/obj/%.o)
$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< $(filter %.o,$^) \
	  -lcjson $(REQ_LIBS_DL) -llmdb -lzstd -lpthread
.PHONY: $(FUZZ_RUN)
fuzz: $(FUZZ_RUN)
$(FUZZ_RUN): fuzz-run-%: $(B)/fuzz/%
	@n=$*; rm -rf $(B)/fuzz/new-$$n; mkdir -p tests/fuzz/corpus/$$n $(B)/fuzz/new-$$n; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
	  d=; [ -f tests/fuzz/$$n.dict ] && d=-dict=tests/fuzz/$$n.dict; \
	  $< -seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(B)/fuzz/ $$d $(B)/fuzz/new-$$n \
	    tests/fuzz/corpus/$$n 2>$(B)/fuzz/$$n.log || { tail -40 $(B)/fuzz/$$n.log; exit 1; }; \
	  grep -E 'stat::number_of_executed_units|stat::peak_rss' $(B)/fuzz/$$n.log | sed "s/^/$$n: /"

# ---- install ---------------------------------------------------------------
# Nothing under DESTDIR is ever written into an installed file: the pc file
# and the mount-helper link name PREFIX paths only. The pc file writes libdir
# and includedir relative to ${prefix} when they lie under PREFIX, so that
# pkg-config --define-prefix follows a moved tree; the installed binding
# records LIBDIR relative to its own directory (found in a moved or DESTDIR
# tree) and absolute (found from a copy of the module elsewhere).
INCLUDEDIR ?= $(PREFIX)/include
MANPREFIX  ?= $(PREFIX)/share/man
PYTHONDIR  ?= $(PREFIX)/share/offloadfs/python
# The deepagents backend (npm package "agentlink"): npm install JSDIR.
JSDIR      ?= $(PREFIX)/share/offloadfs/js
JS_FILES   := agentlink/js/package.json agentlink/js/index.js agentlink/js/names.js agentlink/js/index.d.ts agentlink/js/README.md
LDCONFIG   ?= ldconfig
BINDIR := $(DESTDIR)$(PREFIX)/bin
INCDIR := $(DESTDIR)$(INCLUDEDIR)/agentlink
LIBD   := $(DESTDIR)$(LIBDIR)
PCDIR  := $(LIBD)/pkgconfig
MANDIR := $(DESTDIR)$(MANPREFIX)
PYDIR  := $(DESTDIR)$(PYTHONDIR)
JSD    := $(DESTDIR)$(JSDIR)
# mount(8) runs mount.fuse3 without PATH, and mount.fuse3 starts the daemon
# through /bin/sh, whose built-in PATH is HELPER_PATH (dash, fuse3 3.14). A
# PREFIX whose bin/ is not in it gets a symlink in MOUNT_LINK_DIR so that
# fstab and mount -t fuse.offloadfs find offloadfs; MOUNT_LINK_DIR= skips it.
HELPER_PATH := /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin
MOUNT_LINK_DIR ?= $(if $(filter $(HELPER_PATH),$(patsubst %/,%,$(PREFIX))/bin),,/usr/local/sbin)
PC_LIBDIR     = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))
PY_LIBDIR_REL = $(shell realpath -s -m --relative-to='$(PYTHONDIR)' '$(LIBDIR)')

install: $(PROGS)
	install -d $(BINDIR) $(INCDIR) $(LIBD) $(PCDIR) $(MANDIR)/man1 $(MANDIR)/man3 $(PYDIR)
	install -m 755 $(B)/offloadfs $(B)/agentlink $(BINDIR)/
	install -m 644 agentlink/agentlink.h $(INCDIR)/
	install -m 644 $(B)/libagentlink.a $(LIBD)/
	install -m 755 $(B)/libagentlink.so $(LIBD)/libagentlink.so.$(VERSION)
	ln -sf libagentlink.so.$(VERSION) $(LIBD)/libagentlink.so.$(SOVER)
	ln -sf libagentlink.so.$(SOVER) $(LIBD)/libagentlink.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(PC_LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(PC_INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    agentlink/agentlink.pc.in > $(PCDIR)/agentlink.pc
	chmod 644 $(PCDIR)/agentlink.pc
	install -m 644 doc/offloadfs.1 doc/agentlink.1 $(MANDIR)/man1/
	install -m 644 doc/agentlink.3 $(MANDIR)/man3/
	sed -e 's|^_LIBDIR_REL = None$$|_LIBDIR_REL = "$(PY_LIBDIR_REL)"|' \
	    -e 's|^_LIBDIR = None$$|_LIBDIR = "$(LIBDIR)"|' \
	    agentlink/python/agentlink.py > $(PYDIR)/agentlink.py
	chmod 644 $(PYDIR)/agentlink.py
	install -d $(JSD)
	install -m 644 $(JS_FILES) $(JSD)/
ifneq ($(MOUNT_LINK_DIR),)
	@{ install -d $(DESTDIR)$(MOUNT_LINK_DIR) && \
	   ln -sfn $(PREFIX)/bin/offloadfs $(DESTDIR)$(MOUNT_LINK_DIR)/offloadfs && \
	   echo "linked $(DESTDIR)$(MOUNT_LINK_DIR)/offloadfs -> $(PREFIX)/bin/offloadfs (for mount -t fuse.offloadfs)"; } || \
	 echo "note: no link in $(MOUNT_LINK_DIR): mount -t fuse.offloadfs and fstab will not find $(PREFIX)/bin/offloadfs" >&2
endif
	@[ -n "$(DESTDIR)" ] || $(LDCONFIG) 2>/dev/null || true

uninstall:
	rm -f $(BINDIR)/offloadfs $(BINDIR)/agentlink $(INCDIR)/agentlink.h \
	  $(LIBD)/libagentlink.a $(LIBD)/libagentlink.so $(LIBD)/libagentlink.so.$(SOVER) \
	  $(LIBD)/libagentlink.so.$(VERSION) $(PCDIR)/agentlink.pc \
	  $(MANDIR)/man1/offloadfs.1 $(MANDIR)/man1/agentlink.1 $(MANDIR)/man3/agentlink.3 \
	  $(PYDIR)/agentlink.py
	rm -f $(addprefix $(JSD)/,$(notdir $(JS_FILES)))
ifneq ($(MOUNT_LINK_DIR),)
	@l=$(DESTDIR)$(MOUNT_LINK_DIR)/offloadfs; \
	 if [ "$$(readlink "$$l")" = "$(PREFIX)/bin/offloadfs" ]; then rm -f "$$l"; fi
endif
	-@rmdir $(INCDIR) $(PYDIR) $(JSD) $(DESTDIR)$(PREFIX)/share/offloadfs 2>/dev/null || true
	@[ -n "$(DESTDIR)" ] || $(LDCONFIG) 2>/dev/null || true

clean:
	rm -rf $(B) build-asan build-tsan

-include $(shell find $(B)/obj $(B)/fuzz/obj -name '*.d' 2>/dev/null)
