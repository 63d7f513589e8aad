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
REQ_LIBS_STORE := -llmdb -lpthread
REQ_LIBS_AL    := -lcjson $(REQ_LIBS_STORE)
REQ_LIBS_FS    := -lfuse3 $(REQ_LIBS_STORE)

B := build

STORE_SRC := $(wildcard store/*.c)
FS_SRC    := $(wildcard fs/*.c)
AL_CLI_SRC := $(wildcard agentlink/cli*.c)
AL_LIB_SRC := $(filter-out $(AL_CLI_SRC),$(wildcard agentlink/*.c))

STORE_OBJ := $(STORE_SRC:%.c=$(B)/obj/%.o)
FS_OBJ    := $(FS_SRC:%.c=$(B)/obj/%.o)
AL_LIB_OBJ := $(AL_LIB_SRC:%.c=$(B)/obj/%.o)
AL_CLI_OBJ := $(AL_CLI_SRC:%.c=$(B)/obj/%.o)

TEST_SRC  := $(wildcard tests/store/test_*.c tests/agentlink/test_*.c tests/fs/test_*.c)
TEST_BIN  := $(TEST_SRC:tests/%.c=$(B)/tests/%)
TOOL_SRC  := $(wildcard tests/tools/*.c)
TOOL_BIN  := $(TOOL_SRC:tests/tools/%.c=$(B)/tools/%)

PROGS := $(B)/libstore.a
ifneq ($(AL_LIB_SRC),)
PROGS += $(B)/libagentlink.a $(B)/libagentlink.so
endif
ifneq ($(AL_CLI_SRC),)
PROGS += $(B)/agentlink
endif
ifneq ($(FS_SRC),)
PROGS += $(B)/offloadfs
endif

.PHONY: all deps test test-unit run stop bench install uninstall clean
all: $(PROGS) $(TEST_BIN) $(TOOL_BIN)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/libstore.a: $(STORE_OBJ)
	@mkdir -p $(B)
	rm -f $@ && ar rcs $@ $^

$(B)/libagentlink.a: $(AL_LIB_OBJ) $(STORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/libagentlink.so: $(AL_LIB_OBJ) $(STORE_OBJ)
	$(CC) -shared -Wl,-soname,libagentlink.so.$(SOVER) $(LDFLAGS) -o $@ $^ $(REQ_LIBS_AL)

$(B)/agentlink: $(AL_CLI_OBJ) $(B)/libagentlink.a
	$(CC) $(LDFLAGS) -o $@ $(AL_CLI_OBJ) $(B)/libagentlink.a $(REQ_LIBS_AL)

$(B)/offloadfs: $(FS_OBJ) $(B)/libstore.a
	$(CC) $(LDFLAGS) -o $@ $(FS_OBJ) $(B)/libstore.a $(REQ_LIBS_FS)

# Unit tests: one cmocka binary per file. A test may ask for LMDB calls to be
# wrapped (fault injection) by listing them in a "WRAP:" comment line.
$(B)/tests/store/%: tests/store/%.c $(B)/libstore.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libstore.a \
	  $$(sed -n 's|^/\* WRAP: \(.*\) \*/|\1|p' $<) -lcmocka $(REQ_LIBS_STORE)
$(B)/tests/agentlink/%: tests/agentlink/%.c $(B)/libagentlink.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libagentlink.a \
	  $$(sed -n 's|^/\* WRAP: \(.*\) \*/|\1|p' $<) -lcmocka $(REQ_LIBS_AL)
$(B)/tests/fs/%: tests/fs/%.c $(B)/libstore.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libstore.a -lcmocka $(REQ_LIBS_STORE)
# Small C drivers used by shell tests and benchmarks.
$(B)/tools/%: tests/tools/%.c $(B)/libstore.a
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libstore.a $(REQ_LIBS_STORE)

deps:
	@scripts/deps.sh

test: deps
	$(MAKE) all
	tests/run.sh

test-unit: all
	tests/run.sh unit

clean:
	rm -rf $(B)

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
