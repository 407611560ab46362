/**
 * Every relative link in README.md, CHANGELOG.md and docs/ leads somewhere: the file exists and,
 * when the link names a section, that file has a heading of that anchor as GitHub renders it.
 * Sections move between the README and docs/; this keeps the links that point at them true.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import GithubSlugger from "github-slugger";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const PAGES = ["README.md", "CHANGELOG.md", ...readdirSync(join(ROOT, "docs")).map((name) => `docs/${name}`)].filter(
  (page) => page.endsWith(".md"),
);

/** The text outside fenced code blocks, where a `](` is code rather than a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "");
}

function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const headings = [...prose(readFileSync(file, "utf8")).matchAll(/^#{1,6} +(.+?) *#*$/gm)];
  return new Set(headings.map((m) => slugger.slug(m[1]!.replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1"))));
}

function linksOf(page: string): { target: string; line: number }[] {
  const text = prose(readFileSync(join(ROOT, page), "utf8"));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => ({ target: m[1]!, line: text.slice(0, m.index).split("\n").length }))
    .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("relative links in the docs", () => {
  it.each(PAGES)("%s links only to files and sections that exist", (page) => {
    const broken: string[] = [];
    for (const { target, line } of linksOf(page)) {
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const file = path ? join(ROOT, dirname(page), decodeURIComponent(path)) : join(ROOT, page);
      if (!existsSync(file)) broken.push(`${page}:${line} ${target}: no file ${relative(ROOT, file)}`);
      else if (anchor && file.endsWith(".md") && !anchorsOf(file).has(decodeURIComponent(anchor)))
        broken.push(`${page}:${line} ${target}: no heading '#${anchor}' in ${relative(ROOT, file)}`);
    }
    expect(broken).toEqual([]);
  });
});
