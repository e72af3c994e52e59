/* Headless stand-in for raylib.h, so that PufferLib's pong.h compiles without raylib.
 *
 * pong.h includes raylib.h only for its renderer (c_render, make_client, close_client), which the
 * envport adapter never calls. These definitions give the renderer's types and calls something to
 * compile against and do nothing; the simulation (c_reset, c_step) uses none of them. */
#ifndef ENVPORT_RAYLIB_STUB_H
#define ENVPORT_RAYLIB_STUB_H

typedef struct Color { unsigned char r, g, b, a; } Color;
typedef struct Vector2 { float x, y; } Vector2;
typedef struct Rectangle { float x, y, width, height; } Rectangle;
typedef struct Texture2D { unsigned int id; int width, height, mipmaps, format; } Texture2D;

#define WHITE (Color){255, 255, 255, 255}
#define KEY_ESCAPE 256

static inline void InitWindow(int width, int height, const char* title) { (void)width; (void)height; (void)title; }
static inline void CloseWindow(void) {}
static inline void SetTargetFPS(int fps) { (void)fps; }
static inline Texture2D LoadTexture(const char* path) { (void)path; Texture2D t = {0}; return t; }
static inline int IsKeyDown(int key) { (void)key; return 0; }
static inline void BeginDrawing(void) {}
static inline void EndDrawing(void) {}
static inline void ClearBackground(Color color) { (void)color; }
static inline void DrawRectangle(int x, int y, int w, int h, Color color) { (void)x; (void)y; (void)w; (void)h; (void)color; }
static inline void DrawTexturePro(Texture2D texture, Rectangle source, Rectangle dest, Vector2 origin, float rotation, Color tint) {
    (void)texture; (void)source; (void)dest; (void)origin; (void)rotation; (void)tint;
}
static inline const char* TextFormat(const char* text, ...) { return text; }
static inline int MeasureText(const char* text, int font_size) { (void)text; (void)font_size; return 0; }
static inline void DrawText(const char* text, int x, int y, int font_size, Color color) { (void)text; (void)x; (void)y; (void)font_size; (void)color; }

#endif
