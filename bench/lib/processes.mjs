// Child processes of the bench: run to completion, or start in the background and stop on the way out.

import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { BIN, NODE, ROOT } from "./config.mjs";

/** Every child we started and that has not exited yet: stopped on the way out, whatever happens. */
const children = new Set();

export function track(child) {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

export async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

export async function stopAll() {
  await Promise.all([...children].map(stop));
}

process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/**
 * Runs `node ARGS` to completion; `ms` is the wall time from spawn to exit (stdio closed).
 * `forwardStderr`: its stderr (progress lines) also goes to ours as it comes.
 */
export function exec(args, { env, input, cwd = ROOT, forwardStderr = false } = {}) {
  return new Promise((resolve, reject) => {
    const out = [];
    const err = [];
    const started = process.hrtime.bigint();
    const child = track(
      spawn(NODE, args, { cwd, env, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] }),
    );
    child.stdout.on("data", (chunk) => out.push(chunk));
    child.stderr.on("data", (chunk) => {
      err.push(chunk);
      if (forwardStderr) process.stderr.write(chunk);
    });
    child.once("error", reject);
    child.once("close", (code, signal) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      resolve({ code, signal, ms, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
    if (input !== undefined) child.stdin.end(input);
  });
}

export function describeArgs(args) {
  return `node ${args.map((a) => (a === BIN ? "bin/bizctl.js" : /[\s"'()]/.test(a) ? JSON.stringify(a) : a)).join(" ")}`;
}

/** exec() that must succeed. */
export async function run(args, options) {
  const result = await exec(args, options);
  if (result.code !== 0) {
    throw new Error(
      `\`${describeArgs(args)}\` exited with ${result.code ?? result.signal}\n--- stderr:\n${result.stderr.trim()}\n--- stdout:\n${result.stdout.trim().slice(0, 2000)}`,
    );
  }
  return result;
}

/**
 * Starts `node ARGS` in the background and resolves once a line of its stderr matches `pattern`
 * (whose first group is the URL); its stdout goes to `logFile` (or nowhere).
 */
export async function startBackground(label, args, { env, pattern, logFile }) {
  const fd = logFile ? openSync(logFile, "a") : "ignore";
  const child = track(spawn(NODE, args, { cwd: ROOT, env, stdio: ["ignore", fd, "pipe"] }));
  if (typeof fd === "number") closeSync(fd);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (message) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`${label}: ${message}\n--- stderr:\n${stderr.trim()}`));
    };
    const timer = setTimeout(() => fail("did not announce its URL within 30 s"), 30_000);
    child.stderr.on("data", (chunk) => {
      if (stderr.length < 64 * 1024) stderr += chunk; // keep draining the pipe either way
      const match = pattern.exec(stderr);
      if (match && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    });
    child.once("error", (error) => fail(error.message));
    child.once("exit", (code, signal) => fail(`exited early with ${code ?? signal}`));
  });
}
