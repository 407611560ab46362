/**
 * The server's import graph, read with the TypeScript compiler (static, type-only and lazy
 * `import()` alike): no file reaches itself through its imports, and no folder does either, so
 * the folders stack in layers and nothing points back up. biome.json's zones say which layer may
 * import which; this catches what a zone cannot, a circle inside one folder or one between two
 * folders that no zone covers yet.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SERVER = join(import.meta.dirname, "..", "..", "src", "server");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** file (relative to src/server) → the server files it imports */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SERVER)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith("."))
      .map((name) => relative(SERVER, join(dirname(file), name.replace(/\.js$/, ".ts"))))
      .filter((target) => !target.startsWith(".."));
    graph.set(relative(SERVER, file), [...new Set(targets)]);
  }
  return graph;
}

/** The circles of a graph: each strongly connected component of more than one node (Tarjan), or a node that imports itself. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** A file's layer: its folder under src/server; a file at the root (app.ts, a leaf) is a layer of its own. */
const layerOf = (file: string) => (file.includes("/") ? `${file.split("/")[0]}/` : file);

function layerGraph(files: Map<string, string[]>): Map<string, string[]> {
  const layers = new Map<string, Set<string>>();
  for (const [file, targets] of files) {
    const from = layerOf(file);
    const out = layers.get(from) ?? new Set<string>();
    for (const target of targets) if (layerOf(target) !== from) out.add(layerOf(target));
    layers.set(from, out);
  }
  return new Map([...layers].map(([layer, out]) => [layer, [...out]]));
}

describe("the server's imports", () => {
  const graph = importGraph();

  it("reads the whole server", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get("app.ts")).toContain("plugins/metrics.ts");
  });

  it("form no circle of files", () => {
    expect(circles(graph)).toEqual([]);
  });

  it("form no circle of folders: every arrow points down a layer", () => {
    expect(circles(layerGraph(graph))).toEqual([]);
  });

  it("finds a circle where there is one", () => {
    const circular = new Map([
      ["mail/mailer.ts", ["mail/delivery.ts"]],
      ["mail/delivery.ts", ["mail/mailer.ts", "store/schema.ts"]],
      ["store/schema.ts", []],
      ["metrics/app-metrics.ts", ["store/sessions-repo.ts"]],
      ["store/sessions-repo.ts", ["metrics/metrics.ts"]],
      ["metrics/metrics.ts", []],
    ]);
    expect(circles(circular)).toEqual([["mail/delivery.ts", "mail/mailer.ts"]]);
    expect(circles(layerGraph(circular))).toEqual([["metrics/", "store/"]]);
  });
});
