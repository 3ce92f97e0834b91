// Fails when src/schema.ts is not what openapi-typescript generates from
// web/openapi.json now: the document changed and `npm run generate` was not
// run (or the generated file was edited by hand). The generator is the
// pinned one in node_modules, so its output is byte for byte the same.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tmp = mkdtempSync(join(tmpdir(), "linkforge-sdk-"));
try {
  const fresh = join(tmp, "schema.ts");
  execFileSync(
    process.execPath,
    [join(root, "node_modules/openapi-typescript/bin/cli.js"), join(root, "../../web/openapi.json"), "--output", fresh],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const want = readFileSync(fresh, "utf8");
  const have = readFileSync(join(root, "src/schema.ts"), "utf8");
  if (want !== have) {
    const a = have.split("\n");
    const b = want.split("\n");
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    console.error(`sdk/typescript/src/schema.ts disagrees with web/openapi.json from line ${i + 1}:`);
    console.error(`  committed: ${a[i] ?? "(end of file)"}`);
    console.error(`  generated: ${b[i] ?? "(end of file)"}`);
    console.error("run `npm run generate` in sdk/typescript and commit src/schema.ts");
    process.exit(1);
  }
  console.log("sdk/typescript/src/schema.ts agrees with web/openapi.json");
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
