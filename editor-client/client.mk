# The VS Code extension (editor-client/): included by the top-level Makefile.
#   make client-check  lint, type-check and unit-test the TypeScript
#   make vsix          build editor-client/redline-0.1.0.vsix (with Redline's wheel inside)
# npm dependencies come exactly from editor-client/package-lock.json (npm ci); install scripts
# are not run (esbuild finds its platform binary package without its postinstall).

CLIENT      := editor-client
CLIENT_NPM  := npm --prefix $(CLIENT)
CLIENT_VSIX := $(CLIENT)/redline-0.1.0.vsix
CLIENT_SRC  := $(wildcard $(CLIENT)/src/*.ts) $(CLIENT)/package.json $(CLIENT)/README.md \
	$(CLIENT)/LICENSE $(wildcard $(CLIENT)/media/*) $(CLIENT)/.vscodeignore

.PHONY: client-check vsix

$(CLIENT)/node_modules/.install-stamp: $(CLIENT)/package.json $(CLIENT)/package-lock.json | node
	cd $(CLIENT) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

client-check: $(CLIENT)/node_modules/.install-stamp
	$(CLIENT_NPM) run --silent lint
	$(CLIENT_NPM) run --silent typecheck
	$(CLIENT_NPM) run --silent test

# The .vsix carries Redline's own wheel (editor-client/server/, built here with uv from this
# checkout): with no server installed, the extension offers to install that wheel with uv or
# pipx (src/install.ts). scripts/check_vsix.py fails the build if the package lacks it.
CLIENT_WHEEL_SRC := pyproject.toml $(shell find server/redline prompts -type f -not -path '*/__pycache__/*' \
	-not -name '*.pyc' 2>/dev/null)

$(CLIENT_VSIX): $(CLIENT)/node_modules/.install-stamp $(CLIENT_SRC) $(CLIENT_WHEEL_SRC) | $(UV)
	rm -rf $(CLIENT)/server
	$(UV) build --wheel --quiet --out-dir $(CLIENT)/server
	cd $(CLIENT) && npm run --silent package
	$(BIN)/python scripts/check_vsix.py $(CLIENT_VSIX)

vsix: $(CLIENT_VSIX)
