// The argument list of a queen.* call in named notation, so that a parameter SQL adds, drops or
// reorders fails the call instead of shifting every later value: namedArgs('p_tenant', 'p_from::timestamptz')
// is `p_tenant => $1, p_from => $2::timestamptz`. Call sites build their text once, at module load,
// and test/db/calls.test.ts checks each name against the function's parameters.
export function namedArgs(...params: string[]): string {
  return params
    .map((p, i) => {
      const [name, cast] = p.split('::');
      return `${name} => $${i + 1}${cast === undefined ? '' : `::${cast}`}`;
    })
    .join(', ');
}
