import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import type { Nodes, Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { toString } from 'mdast-util-to-string';
import { gfm } from 'micromark-extension-gfm';
import { describe, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';

/**
 * The README is the front door and docs/ holds the rest: a link between them that leads nowhere (a
 * moved section, a renamed heading) is a reader lost. Anchors are GitHub's (github-slugger), as the
 * repository's pages render them.
 */
const ROOT = fromRepoRoot('');
const README_MAX_LINES = 1_000;

function markdownFiles(): string[] {
  const files = ['README.md', 'CHANGELOG.md', 'client-sdk/README.md'].map((f) => join(ROOT, f));
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  for (const dir of ['docs', 'deploy']) if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir));
  return files.filter((f) => existsSync(f));
}

const trees = new Map<string, Root>();
function parse(path: string): Root {
  let tree = trees.get(path);
  if (!tree) {
    tree = fromMarkdown(readFileSync(path, 'utf8'), { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
    trees.set(path, tree);
  }
  return tree;
}

function walkTree(node: Nodes, visit: (node: Nodes) => void): void {
  visit(node);
  if ('children' in node) for (const child of node.children) walkTree(child, visit);
}

const anchorCache = new Map<string, Set<string>>();
/** The fragments GitHub gives a file's headings (a repeated heading gets -1, -2, …), and explicit `<a id>`s. */
function anchorsOf(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (anchors) return anchors;
  anchors = new Set();
  const slugger = new GithubSlugger();
  walkTree(parse(path), (node) => {
    if (node.type === 'heading') anchors.add(slugger.slug(toString(node)));
    if (node.type === 'html') for (const m of node.value.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  });
  anchorCache.set(path, anchors);
  return anchors;
}

/** Every link, image and HTML `src`/`href` of a file that points inside the repository. */
function localLinksOf(path: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  walkTree(parse(path), (node) => {
    const line = node.position?.start.line ?? 0;
    if (node.type === 'link' || node.type === 'image' || node.type === 'definition')
      links.push({ target: node.url, line });
    if (node.type === 'html')
      for (const m of node.value.matchAll(/\b(?:src|href)="([^"]+)"/g)) links.push({ target: m[1], line });
  });
  return links.filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('{'));
}

function brokenLinksOf(path: string): string[] {
  const broken: string[] = [];
  for (const { target, line } of localLinksOf(path)) {
    const [file, fragment] = target.split('#', 2) as [string, string | undefined];
    const where = `${relative(ROOT, path)}:${line} → ${target}`;
    const resolved = file === '' ? path : resolve(dirname(path), decodeURIComponent(file));
    if (!resolved.startsWith(ROOT) || !existsSync(resolved)) {
      broken.push(`${where}: no such file`);
      continue;
    }
    if (fragment === undefined || fragment === '') continue;
    if (!resolved.endsWith('.md')) broken.push(`${where}: an anchor into a file that is not Markdown`);
    else if (!anchorsOf(resolved).has(fragment))
      broken.push(`${where}: no heading with that anchor in ${relative(ROOT, resolved)}`);
  }
  return broken;
}

describe('README and docs', () => {
  it(`README.md is at most ${README_MAX_LINES} lines: the front door, with the rest in docs/`, () => {
    const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('every relative link and anchor of the README, CHANGELOG, docs/, deploy/ and the SDK README resolves', () => {
    const files = markdownFiles();
    expect(files.map((f) => relative(ROOT, f))).toContain('README.md');
    expect(files.flatMap(brokenLinksOf)).toEqual([]);
  });

  it('every file under docs/ is reachable from the README (directly or through another page)', () => {
    const reached = new Set<string>();
    const queue = [join(ROOT, 'README.md')];
    while (queue.length > 0) {
      const path = queue.pop()!;
      if (reached.has(path)) continue;
      reached.add(path);
      for (const { target } of localLinksOf(path)) {
        const file = target.split('#', 1)[0];
        if (file.endsWith('.md')) queue.push(resolve(dirname(path), decodeURIComponent(file)));
      }
    }
    const docs = markdownFiles().filter((f) => f.startsWith(join(ROOT, 'docs')));
    expect(docs.filter((f) => !reached.has(f)).map((f) => relative(ROOT, f))).toEqual([]);
  });

  it("every setting config.ts reads has a row in the README's configuration table", () => {
    const source = readFileSync(fromRepoRoot('server/src/config.ts'), 'utf8');
    // Any indentation: the schema's keys are its only lines that start with an upper-case name and `: z`.
    const settings = [...source.matchAll(/^ +([A-Z][A-Z0-9_]+): z/gm)].map((m) => m[1]);
    expect(settings.length).toBeGreaterThan(30);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const rows = new Set([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]));
    // The former name of DATABASE_DIRECT_URL is documented in that row, not one of its own.
    const missing = settings.filter(
      (name) => !rows.has(name) && !(name === 'DATABASE_LISTEN_URL' && readme.includes('`DATABASE_LISTEN_URL`')),
    );
    expect(missing).toEqual([]);
  });
});
