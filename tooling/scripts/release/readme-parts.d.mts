/** A runnable example of a README: its 1-based fence line, its code and the texts it promises to print. */
export interface ReadmeExampleBlock {
  line: number;
  code: string;
  prints: string[];
}
export function readmeExamples(markdown: string): ReadmeExampleBlock[];
export function installLine(markdown: string): string[];
export function readmeParts(markdown: string): { install: string[]; examples: ReadmeExampleBlock[]; fragments: number };
export function firstUnkept(prints: readonly string[], output: string): string | undefined;
