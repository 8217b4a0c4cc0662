// Float helpers GLSL lacks or leaves undefined where the CPU backends define
// a result (C's log1p, expm1, erf, tanh without overflow, pow of negatives,
// atan2 of zeros). f32 only: double_math.glsl has the f64 versions.
#define F_NAN uintBitsToFloat(0x7fc00000u)
#define F_INF uintBitsToFloat(0x7f800000u)

// GLSL leaves sqrt, asin, acos, acosh and atanh undefined outside their
// domains; C defines NaN there (and -inf / inf at the poles).
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

// exp, expm1, log, log1p and tanh in software: the GLSL built-ins may be
// off by 2^-21 absolutely (log near 1) or by 3 + 2|x| ulps (exp), and flush
// subnormals; these stay within a few ulps (the CPU backends' SIMD bound)
// and make and read subnormals through their bits. Same recipes as
// double_math.glsl; locals are `precise` so drivers keep the compensations.
#define F_LN2_HI 0.693359375       // 9 bits: k * hi is exact
#define F_LN2_LO -2.12194440e-4

float f_exp(float x) {
  if (isnan(x)) return x;
  if (x > 88.7228394) return F_INF;
  if (x < -103.972084) return 0.0;  // below half the smallest subnormal
  precise const float k = roundEven(x * 1.44269504);
  precise const float r = (x - k * F_LN2_HI) - k * F_LN2_LO;  // |r| <= ln2 / 2
  // e^r: Taylor to r^7.
  precise float p = 1.0 / 5040.0;
  p = fma(p, r, 1.0 / 720.0);
  p = fma(p, r, 1.0 / 120.0);
  p = fma(p, r, 1.0 / 24.0);
  p = fma(p, r, 1.0 / 6.0);
  p = fma(p, r, 0.5);
  p = fma(p, r, 1.0);
  p = fma(p, r, 1.0);
  const int e = int(k);
  if (e >= -126) return ldexp(ldexp(p, e / 2), e - e / 2);
  // A subnormal result: its integer mantissa p * 2^(e + 149), as bits.
  return uintBitsToFloat(uint(roundEven(ldexp(p, e + 149))));
}

float f_expm1(float x) {
  if (isnan(x) || abs(x) < 1e-7) return x;  // x^2 / 2 is below half an ulp of x
  if (abs(x) > 0.34) return f_exp(x) - 1.0;
  // x + x^2/2! + ... + x^9/9!
  precise float p = 1.0 / 362880.0;
  p = fma(p, x, 1.0 / 40320.0);
  p = fma(p, x, 1.0 / 5040.0);
  p = fma(p, x, 1.0 / 720.0);
  p = fma(p, x, 1.0 / 120.0);
  p = fma(p, x, 1.0 / 24.0);
  p = fma(p, x, 1.0 / 6.0);
  p = fma(p, x, 0.5);
  p = fma(p, x, 1.0);
  precise const float r = p * x;
  return r;
}

float f_log(float x) {
  if (isnan(x) || x < 0.0) return F_NAN;
  if (x == 0.0) return -F_INF;
  if (isinf(x)) return x;
  uint bits = floatBitsToUint(x);
  float scaled = 0.0;
  if (bits < 0x00800000u) {
    // A subnormal is its mantissa bits times 2^-149 (read exactly, as an int).
    const float m = float(bits);
    bits = floatBitsToUint(m);
    scaled = 149.0;
  }
  int e = int(bits >> 23) - 127;
  precise float m = uintBitsToFloat((bits & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  if (m > 1.41421356) {
    m *= 0.5;
    e += 1;
  }
  // log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: the series to s^9.
  precise const float f = m - 1.0;  // exact
  precise const float s = f / (2.0 + f);
  precise const float z = s * s;
  precise float p = 1.0 / 9.0;
  p = fma(p, z, 1.0 / 7.0);
  p = fma(p, z, 1.0 / 5.0);
  p = fma(p, z, 1.0 / 3.0);
  p = fma(p, z, 1.0);
  const float de = float(e) - scaled;
  precise const float r = de * F_LN2_HI + (2.0 * s * p + de * F_LN2_LO);
  return r;
}

float f_log1p(float x) {
  precise const float u = 1.0 + x;
  if (u == 1.0) return x;  // x below the rounding of 1 + x
  if (isinf(u) || u <= 0.0 || isnan(u)) return f_log(u);
  precise const float rounded = u - 1.0;
  precise const float r = f_log(u) * (x / rounded);  // corrects the rounding of 1 + x
  return r;
}

float f_tanh(float x) {
  if (isnan(x) || abs(x) < 2.44140625e-4) return x;  // x^3 / 3 is below half an ulp of x
  const float a = abs(x);
  if (a > 9.1) return x > 0.0 ? 1.0 : -1.0;  // tanh rounds to +-1
  precise const float m = f_expm1(2.0 * a);
  precise const float t = m / (m + 2.0);
  return x > 0.0 ? t : -t;
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
