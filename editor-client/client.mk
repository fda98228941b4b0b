# The VS Code extension (editor-client/): included by the top-level Makefile.
#   make client-check  lint, type-check and unit-test the TypeScript
#   make vsix          build editor-client/redline-0.1.0.vsix
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

$(CLIENT_VSIX): $(CLIENT)/node_modules/.install-stamp $(CLIENT_SRC)
	cd $(CLIENT) && npm run --silent package

vsix: $(CLIENT_VSIX)
