import { ShapingFont } from './src/shaping.ts';
import { bengaliFontBytes } from './src/fonts.ts';
const f = new ShapingFont(bengaliFontBytes());
for (const t of ['স্বাস্থ্য']) {
  const s = f.shape(t);
  console.log(s.glyphs.map((g, i) => `${g}:${s.clusters[i]}:${f.codePointOf(g)?.toString(16)}:${s.xAdvance[i]}/${s.xOffset[i]}/${s.yOffset[i]}`).join(' '));
}
