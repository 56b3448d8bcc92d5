// Versions of landed migrations that were edited after they landed, before drizzle/hashes.json
// froze them: databases migrated from these versions exist, and migrating brings them up to date
// (lib/db/migration-repair.ts). Keyed by tag, then sha256 (drizzle's hash) -> the commit of that
// version. Generated once from git history, on a checkout whose HEAD is 74d3fa4:
//   for f in drizzle/000[0-4]_*.sql; do git log --format=%h --reverse -- "$f" | while read c; do
//     echo "$(git show "$c:$f" | sha256sum | cut -c1-64) $c $f"; done; done
// keeping every version but the current one. Nothing is ever added here: landed migrations are
// not edited any more (test/db/manifest.test.ts).
export const SUPERSEDED_HASHES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  '0000_log_schema': {
    '69908d2f057b43201a6d161569997d047d7673372826d77e975de5a313aa9a11': 'a107141',
  },
  '0002_push_functions': {
    e5bd9beb6afafaea871358e01bb16ac5256f009efe2829421363f7c4f935b51e: 'a107141',
    bbffc637f2941ec55da3a304778120f410c63709358295472991a942b0854d8c: 'f289bc1',
    '978dd0c382c56ca67570f940d872c4f134864082301ac613fda0d9b4805028be': 'b844cb8',
  },
  '0003_pop_ack_functions': {
    '06f766e3e2dfe7409b27e71bdf0e1d3d5ccfcb08e3efac32860e0da858f05bd7': 'a107141',
    '98f184bbf552c6b8c4295aff7719e7f41494000e374520a2f95ab4cb12a3c1de': 'f289bc1',
    b4a4c071bea3f6cd3467293edf858197f5b6024664f9eaf2feaf01ca44da300d: 'bd9996a',
    '6130b4556a7ff9ff93ba6dfbeb33055ef420810cd5860a15f1a4c3f5ff5af1e3': '2b16466',
  },
  '0004_admin_functions': {
    '72793b7ea0ba6f938f0721d613d99dc5f35cde8d547ca00ab01ed5cb48407386': 'a107141',
  },
};
