#!/usr/bin/env node
// The `flight` command. The built CLI is dist/cli.js; this file exists before any build, so installing the
// workspace links the bin without a warning.
import '../dist/cli.js';
