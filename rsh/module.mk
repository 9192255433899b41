# rsh/module.mk - the self-contained bundle of mpi-rsh and mpi-agent (static
# launcher + bundled loader and libraries; see docs/rsh.md for why not a static
# build) and its installation to $(PREFIX)/lib/mpi-k8s/bundle/.
#   make bundle              -> build/bundle/{mpi-rsh,mpi-agent,lib/,libexec/}
#   make install             -> also runs install-rsh-bundle (INSTALL_HOOKS)

BUNDLE_DIR      := build/bundle
BUNDLE_LAUNCHER := build/launcher/mpi-bundle-launcher
# mpi-rsh's SSH transport is its own program (rsh/ssh/main.c), so the exec transport's
# process never loads libssh2 and libcrypto; mpi-rsh execs it (rsh/ssh_handoff.c)
# (exec_kill.o and reattach.o are the exec client's: left out, so libssl stays out of it)
RSH_SSH_PROG := $(BINDIR)/mpi-rsh-ssh
RSH_SSH_OBJS = $(filter-out %/exec_kill.o %/reattach.o,$(call comp_lib_objs,rsh))
$(RSH_SSH_PROG): $(BUILD)/rsh/ssh/main.o $(RSH_SSH_OBJS) $(LIBMPIK8S) $(LIBKUBE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(BUILD)/rsh/ssh/main.o $(RSH_SSH_OBJS) $(LIBMPIK8S) $(LIBKUBE) $(PROG_LDLIBS)
# the stream holder (rsh/holder/) and the libc-only client mpi-rsh becomes when one serves
# the launch (rsh/thin/): docs/rsh.md "Stream holder"
RSH_HOLDER_PROG := $(BINDIR)/mpi-rsh-holder
RSH_HOLDER_OBJS = $(BUILD)/rsh/holder/main.o $(BUILD)/rsh/holder/stream.o
$(RSH_HOLDER_PROG): $(RSH_HOLDER_OBJS) $(call comp_lib_objs,rsh) $(LIBMPIK8S) $(LIBKUBE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(RSH_HOLDER_OBJS) $(call comp_lib_objs,rsh) $(LIBMPIK8S) $(LIBKUBE) $(PROG_LDLIBS)
# libc only: no lib/, no libssl or jansson; from libmpik8s.a it takes mpik8s/sibling.o alone
RSH_THIN_PROG := $(BINDIR)/mpi-rsh-thin
$(RSH_THIN_PROG): $(BUILD)/rsh/thin/main.o $(BUILD)/rsh/sigpipe.o $(BUILD)/rsh/ssh_handoff.o $(LIBMPIK8S)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^
all: $(RSH_SSH_PROG) $(RSH_HOLDER_PROG) $(RSH_THIN_PROG)
EXTRA_PROGS += $(RSH_SSH_PROG) $(RSH_HOLDER_PROG) $(RSH_THIN_PROG)

# the programs that exist after $(PROGS) is built (mpi-agent only once agent/main.c exists)
BUNDLE_PROGS     = $(filter %/mpi-rsh %/mpi-agent,$(PROGS)) $(RSH_SSH_PROG) $(RSH_HOLDER_PROG) $(RSH_THIN_PROG)

.PHONY: bundle install-rsh-bundle
INSTALL_HOOKS += install-rsh-bundle

$(BUNDLE_LAUNCHER): rsh/launcher/launcher.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -Os -static -s -o $@ $<

bundle: $(PROGS) $(RSH_SSH_PROG) $(RSH_HOLDER_PROG) $(RSH_THIN_PROG) $(BUNDLE_LAUNCHER) rsh/mkbundle.sh
	rsh/mkbundle.sh $(BUNDLE_DIR) $(BUNDLE_LAUNCHER) $(BUNDLE_PROGS)

install-rsh-bundle: bundle
	install -d $(DESTDIR)$(PREFIX)/lib/mpi-k8s
	rm -rf $(DESTDIR)$(PREFIX)/lib/mpi-k8s/bundle.new $(DESTDIR)$(PREFIX)/lib/mpi-k8s/bundle.old
	cp -a $(BUNDLE_DIR) $(DESTDIR)$(PREFIX)/lib/mpi-k8s/bundle.new
	# swapped in, not rebuilt in place: pods of a running kubesim copy from the staged tree
	if [ -e $(DESTDIR)$(PREFIX)/lib/mpi-k8s/bundle ]; then mv $(DESTDIR)$(PREFIX)/lib/mpi-k8s/bundle $(DESTDIR)$(PREFIX)/lib/mpi-k8s/bundle.old; fi
	mv $(DESTDIR)$(PREFIX)/lib/mpi-k8s/bundle.new $(DESTDIR)$(PREFIX)/lib/mpi-k8s/bundle
	rm -rf $(DESTDIR)$(PREFIX)/lib/mpi-k8s/bundle.old

