/** The part of jstat (CommonJS, untyped) the luck figures use: the normal distribution. */
declare module 'jstat' {
  const jStat: {
    normal: {
      cdf(x: number, mean: number, sd: number): number;
      inv(p: number, mean: number, sd: number): number;
    };
  };
  export default jStat;
}
