// Section 19 of `npm run bench` (bench/measures/previous-release.mjs starts it as
// `[taskset -c CORE] node --import tsx bench/argon2-floor.mts SECONDS`): the floor a login's
// password check puts under login throughput, argon2id verifications alone, one after another,
// with the parameters the server hashes with (HASH_OPTIONS, imported, not copied). One at a time
// is the most one core does: a verification (p=1) is one thread's work. Prints one JSON object.
import argon2 from "argon2";
import { HASH_OPTIONS, normalizePassword } from "../src/server/services/passwords.js";

const seconds = Number(process.argv[2] ?? 3);
const password = normalizePassword("correct horse battery staple 42");
const hash = await argon2.hash(password, HASH_OPTIONS);
for (let i = 0; i < 3; i++) await argon2.verify(hash, password);

let verifications = 0;
const started = performance.now();
while (performance.now() - started < seconds * 1000) {
  if (!(await argon2.verify(hash, password))) throw new Error("argon2id did not verify its own hash");
  verifications++;
}
const elapsed = (performance.now() - started) / 1000;
console.log(JSON.stringify({ verifications, seconds: elapsed, options: HASH_OPTIONS }));
