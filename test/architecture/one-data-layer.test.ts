import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * One data layer (issue 46, item 4): SQL is written with kysely (its builder, and its `sql` tag for
 * what the builder cannot say) and run through the one handle (server/src/db/sql.ts, Db); no
 * statement is written as text with `?` placeholders rewritten to `$n`, no custom statement class
 * stands beside kysely's CompiledQuery, and repositories are made by the composition roots
 * (services.ts, app.ts, a module's *.module.ts), never by another repository or a service.
 */
const ROOT = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === 'node_modules' || entry.name === 'dist'
        ? []
        : sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Where a file may construct repositories: the composition roots. */
const compositionRoot = (file: string) =>
  ['services.ts', 'app.ts'].includes(basename(file)) || file.endsWith('.module.ts');

const isStringSql = (node: ts.Node) =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node);

/** What the one data layer rules out in one file's text (`file` names it, for the composition-root rule). */
export function dataLayerBreaches(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) =>
    found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && node.text === 'ParameterisedStatement')
      at(node, 'ParameterisedStatement (a compiled statement is a kysely CompiledQuery)');
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const [first] = node.arguments;
      // x.rows('select ... ?', [a]) / x.one(`... $1`, [a]): SQL as text, its values beside it.
      if ((method === 'rows' || method === 'one') && first && isStringSql(first))
        at(node, `.${method}() given SQL text (write it with kysely's sql tag)`);
      // text.replace(/\?/g, () => `$${++n}`): a placeholder rewriter.
      if (
        (method === 'replace' || method === 'replaceAll') &&
        first &&
        ((ts.isRegularExpressionLiteral(first) && /^\/\\\?\/[a-z]*$/.test(first.text)) ||
          (ts.isStringLiteral(first) && (first.text === '?' || /^\$\d$/.test(first.text))))
      )
        at(node, 'a placeholder rewriter (? or $n in SQL text)');
    }
    if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      /Repository$/.test(node.expression.text) &&
      !compositionRoot(file)
    )
      at(node, `new ${node.expression.text}( outside a composition root (services.ts, app.ts, *.module.ts)`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('one data layer', () => {
  it('no SQL text with placeholders, no placeholder rewriter, no custom statement class, no repository made by another', () => {
    const files = ['server/src', 'bench'].flatMap((dir) => sourceFiles(join(ROOT, dir)));
    const found = files.flatMap((file) => dataLayerBreaches(relative(ROOT, file), readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it('the tests use the same layer: no SQL text with placeholders, no rewriter', () => {
    // Tests may construct repositories (they are their own composition roots).
    const found = sourceFiles(join(ROOT, 'test'))
      .flatMap((file) => dataLayerBreaches(relative(ROOT, file), readFileSync(file, 'utf8')))
      .filter((hit) => !hit.includes('outside a composition root') && !hit.includes('one-data-layer.test.ts'));
    expect(found).toEqual([]);
  });

  it('the check sees what it rules out (it can fail)', () => {
    const breaches = (text: string, file = 'server/src/modules/x/x.repository.ts') => dataLayerBreaches(file, text);
    expect(breaches("await sql.rows<{ n: number }>('select count(*) from t where id = ?', [id]);")).toHaveLength(1);
    expect(breaches('await this.db.one(`select * from t where a = $1 and b = ${B}`, [a]);')).toHaveLength(1);
    expect(breaches('text = query.replace(/\\?/g, () => `$${++n}`);')).toHaveLength(1);
    expect(breaches("NAIVE_ROWS.replaceAll('$1', '?')")).toHaveLength(1);
    expect(breaches('const s = new ParameterisedStatement(text);')).toHaveLength(1);
    expect(breaches('this.commissions = new CommissionsRepository(orm);')).toHaveLength(1);
    expect(breaches('this.repository = new ConversionsRepository(orm);', 'server/src/x/x.service.ts')).toHaveLength(1);
    // What the layer is made of passes.
    expect(breaches('await db.rows(sql<{ n: number }>`select count(*) from t where id = ${id}`);')).toEqual([]);
    expect(breaches('const r = new ConversionsRepository(orm, commissions);', 'server/src/services.ts')).toEqual([]);
    expect(breaches("const x = name.replace(/-/g, '_');")).toEqual([]);
  });
});
