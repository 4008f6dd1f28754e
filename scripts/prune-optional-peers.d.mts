/** Types of scripts/prune-optional-peers.mjs (imported by deploy/test). */
export function runtimePackages(
  lock: {
    packages: Record<
      string,
      { dev?: boolean; devOptional?: boolean; optional?: boolean; dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> }
    >;
  },
  installed?: (location: string) => boolean,
): { keep: string[]; pruned: string[]; prunedLocations: string[] };
