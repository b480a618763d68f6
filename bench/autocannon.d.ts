// The few fields of autocannon's result the benchmarks read (it ships no types).
declare module 'autocannon' {
  interface Result {
    requests: { average: number; total: number };
    latency: { p99: number };
    errors: number;
    non2xx: number;
  }
  function autocannon(options: Record<string, unknown>): Promise<Result>;
  export default autocannon;
}
