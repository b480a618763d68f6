/** One benchmark of `make bench`: prints its figures beside a baseline measured in the same run. */
export interface Benchmark {
  title: string;
  /** Run only when named (`node build/bench/run.js soak`), not by a bare `make bench`. */
  onlyByName?: boolean;
  run: () => Promise<void>;
}
