/** One benchmark of `make bench`: prints its figures beside a baseline measured in the same run. */
export interface Benchmark {
  title: string;
  run: () => Promise<void>;
}
