// Float helpers GLSL lacks or leaves undefined where the CPU backends define
// a result (C's log1p, expm1, erf, tanh without overflow, pow of negatives,
// atan2 of zeros). f32 only: Vulkan has no f64 transcendentals.
#define F_NAN uintBitsToFloat(0x7fc00000u)
#define F_INF uintBitsToFloat(0x7f800000u)

// GLSL leaves log, sqrt, asin, acos, acosh and atanh undefined outside their
// domains; C defines NaN there (and -inf / inf at the poles).
float f_log(float x) {
  if (isnan(x) || x < 0.0) return F_NAN;
  if (x == 0.0) return -F_INF;
  return isinf(x) ? x : log(x);
}
float f_sqrt(float x) { return x < 0.0 ? F_NAN : sqrt(x); }
float f_asin(float x) { return abs(x) > 1.0 ? F_NAN : asin(x); }
float f_acos(float x) { return abs(x) > 1.0 ? F_NAN : acos(x); }
float f_acosh(float x) { return x < 1.0 ? F_NAN : isinf(x) ? x : acosh(x); }
float f_atanh(float x) {
  if (abs(x) > 1.0) return F_NAN;
  if (abs(x) == 1.0) return x * F_INF;
  return atanh(x);
}
float f_asinh(float x) { return isinf(x) ? x : asinh(x); }

float f_log1p(float x) {
  const float u = 1.0 + x;
  if (u == 1.0) return x;  // x below the rounding of 1 + x
  if (isinf(u) || u <= 0.0) return f_log(u);
  return log(u) * (x / (u - 1.0));  // corrects the rounding of 1 + x
}

float f_expm1(float x) {
  const float u = exp(x);
  if (u == 1.0) return x;
  const float um1 = u - 1.0;
  if (um1 == -1.0) return -1.0;
  if (isinf(u)) return u;
  return um1 * (x / log(u));  // corrects the rounding of exp(x) - 1
}

float f_tanh(float x) {
  if (isnan(x)) return x;
  return tanh(clamp(x, -15.0, 15.0));  // tanh(15) rounds to 1; avoids inf / inf
}

// erf: Abramowitz & Stegun 7.1.26 refined (max abs error 1.5e-7) for |x| >= 0.5,
// and its Taylor series below, where the formula loses relative accuracy.
float f_erf(float x) {
  if (isnan(x)) return x;
  const float a = abs(x);
  if (a < 0.5) {
    const float x2 = x * x;
    return x * (1.1283791671 + x2 * (-0.3761263890 + x2 * (0.1128379167 + x2 * (-0.0268661706 + x2 * 0.0052239776))));
  }
  const float t = 1.0 / (1.0 + 0.3275911 * a);
  const float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
                            t * exp(-a * a);
  return x < 0.0 ? -y : y;
}

bool f_signbit(float x) { return (floatBitsToUint(x) & 0x80000000u) != 0u; }

float f_pow(float a, float b) {
  if (b == 0.0 || a == 1.0) return 1.0;  // C: pow(x, 0) = pow(1, y) = 1, NaN included
  if (isnan(a) || isnan(b)) return F_NAN;
  const bool b_int = floor(b) == b;
  const bool b_odd = b_int && !isinf(b) && fract(b * 0.5) != 0.0;
  const float m = abs(a);
  float r;
  if (m == 0.0) r = b < 0.0 ? F_INF : 0.0;
  else if (isinf(m)) r = b < 0.0 ? 0.0 : F_INF;
  else if (isinf(b)) r = (m == 1.0) ? 1.0 : ((m > 1.0) == (b > 0.0) ? F_INF : 0.0);
  else r = exp2(b * log2(m));
  if (f_signbit(a)) {
    if (!b_int && m != 0.0 && !isinf(m)) return F_NAN;  // negative base, fractional power
    if (b_odd) r = -r;
  }
  return r;
}

float f_atan2(float y, float x) {
  if (y == 0.0 && x == 0.0) return f_signbit(x) ? (f_signbit(y) ? -3.14159265358979 : 3.14159265358979) : y;
  return atan(y, x);
}
