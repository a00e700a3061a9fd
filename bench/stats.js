// SPDX-License-Identifier: Apache-2.0
// The statistics bench/run's helpers share: quantiles, and the
// distribution-free interval of a median (the order statistics k and n-k+1
// of n values hold the median with probability 1 - 2 P(Binomial(n, 1/2) < k);
// k is the largest for which that is at least 95 %), with its confidence.
// A median of fewer than 6 values has no 95 % interval: conf is then below
// 0.95, and the caller gives no verdict.
'use strict';

const sorted = (a) => [...a].sort((x, y) => x - y);
const quantile = (a, f) => {
  const s = sorted(a), i = (s.length - 1) * f, lo = Math.floor(i);
  return s[lo] + (s[Math.ceil(i)] - s[lo]) * (i - lo);
};
const binomCdf = (n, k) => {
  let c = 1, sum = 0;
  for (let i = 0; i <= k; i++) { sum += c; c = c * (n - i) / (i + 1); }
  return sum / 2 ** n;
};
function medianInterval(d) {
  const n = d.length, s = sorted(d);
  let k = 1;
  while (k + 1 <= Math.floor(n / 2) && 1 - 2 * binomCdf(n, k) >= 0.95) k++;
  return { lo: s[k - 1], hi: s[n - k], conf: 1 - 2 * binomCdf(n, k - 1) };
}
// met when the interval lies at or below limit, not met when above it,
// else cannot tell (also when the interval holds the median with < 95 %)
function verdict(iv, limit) {
  if (iv.conf < 0.95) return 'cannot tell';
  return iv.hi <= limit ? 'met' : iv.lo > limit ? 'not met' : 'cannot tell';
}

module.exports = { sorted, quantile, medianInterval, verdict };
